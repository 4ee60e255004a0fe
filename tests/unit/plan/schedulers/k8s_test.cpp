// The Kubernetes adapter: the MPIJob manifest (the k8s golden), its rules, and kubectl.
#include "plan/schedulers/k8s.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "../support.hpp"
#include "plan/errors.hpp"
#include "plan/schedulers/scheduler.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::plan {
namespace {

using testing::read;

// The record of a submission is kept under the submit directory.
PlanInputs fixed_inputs() {
  PlanInputs in = testing::fixed_inputs();
  in.run_dir = "/not/used/on/kubernetes";
  in.workdir = "/home/ada";
  return in;
}

const SchedulerAdapter& k8s() { return *scheduler_adapter("kubernetes"); }

SiteProfile k8s_site() {
  return parse_site_profile(read(DTRAIN_TEMPLATE_DIR "/sites/k8s.yaml"), "k8s");
}

LaunchPlan plan_of(const std::string& spec_text, const SiteProfile& site = k8s_site()) {
  return testing::plan_spec(parse_job_spec(spec_text, "job.yaml"), site, fixed_inputs());
}

std::string errors_of(const std::string& spec_text) {
  try {
    plan_of(spec_text);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> strings(const YAML::Node& seq) {
  std::vector<std::string> out;
  for (const auto& n : seq) out.push_back(n.Scalar());
  return out;
}

YAML::Node container(const YAML::Node& manifest, const char* role) {
  return manifest["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"][0];
}

const std::string kHead = "name: pi\nsite: k8s\nimage: example.com/pi:1\n";
const std::string kMinimal = kHead + "command: [./pi]\n";

TEST(MpiJob, GoldenManifestAndPlanJson) {
  testing::expect_golden_plan("k8s", fixed_inputs(), "expected.yaml");
}

TEST(MpiJob, ReplicasSlotsAndTheMpirunLine) {
  const LaunchPlan plan = plan_of(kMinimal + "nodes: 3\nranks_per_node: 2\n");
  const YAML::Node m = YAML::Load(plan.script);
  EXPECT_EQ(m["apiVersion"].Scalar(), "kubeflow.org/v2beta1");
  EXPECT_EQ(m["kind"].Scalar(), "MPIJob");
  EXPECT_EQ(m["metadata"]["name"].Scalar(), "pi");
  EXPECT_FALSE(m["metadata"]["namespace"]);  // kubectl's current namespace
  EXPECT_EQ(m["spec"]["slotsPerWorker"].as<int>(), 2);
  EXPECT_EQ(m["spec"]["mpiImplementation"].Scalar(), "OpenMPI");
  EXPECT_EQ(m["spec"]["sshAuthMountPath"].Scalar(), "/root/.ssh");
  EXPECT_EQ(m["spec"]["runPolicy"]["cleanPodPolicy"].Scalar(), "Running");
  EXPECT_EQ(m["spec"]["runPolicy"]["backoffLimit"].as<int>(), 0);
  EXPECT_FALSE(m["spec"]["runPolicy"]["activeDeadlineSeconds"]);  // no walltime
  const YAML::Node launcher = m["spec"]["mpiReplicaSpecs"]["Launcher"];
  const YAML::Node worker = m["spec"]["mpiReplicaSpecs"]["Worker"];
  EXPECT_EQ(launcher["replicas"].as<int>(), 1);
  EXPECT_EQ(launcher["restartPolicy"].Scalar(), "OnFailure");
  EXPECT_EQ(worker["replicas"].as<int>(), 3);
  EXPECT_EQ(container(m, "Launcher")["image"].Scalar(), "example.com/pi:1");
  EXPECT_EQ(container(m, "Worker")["image"].Scalar(), "example.com/pi:1");
  // Workers keep the operator's default command (sshd); a CPU-only job asks for no resources.
  EXPECT_FALSE(container(m, "Worker")["command"]);
  EXPECT_FALSE(container(m, "Worker")["resources"]);
  EXPECT_FALSE(container(m, "Launcher")["resources"]);
  EXPECT_EQ(strings(container(m, "Launcher")["command"]),
            (std::vector<std::string>{"mpirun",
                                      "--allow-run-as-root",
                                      "-n",
                                      "6",
                                      "-npernode",
                                      "2",
                                      "-x",
                                      "PATH",
                                      "-x",
                                      "LD_LIBRARY_PATH",
                                      "-x",
                                      "PYTHONUNBUFFERED",
                                      "-x",
                                      "DTRAIN_JOB_ID",
                                      "-x",
                                      "DTRAIN_RUN_DIR",
                                      "-x",
                                      "DTRAIN_HOSTS",
                                      "dtrain",
                                      "bind",
                                      "--gpu=closest",
                                      "--gpu-visibility=own",
                                      "--cpu=numa",
                                      "--nic=closest",
                                      "--",
                                      "dtrain",
                                      "run-rank",
                                      "--",
                                      "./pi"}));
  EXPECT_EQ(plan.world_size(), 6);
  EXPECT_EQ(plan.ranks[5].host, "pi-worker-2");
  EXPECT_EQ(plan.ranks[5].local_rank, 1);
  EXPECT_EQ(plan.script_name, "mpijob.yaml");
  EXPECT_EQ(plan.job_id, "pi");
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(MpiJob, RankEnvironmentNamesThePods) {
  const LaunchPlan plan = plan_of(kMinimal + "nodes: 12\nenv: {A: b}\n");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"A", "b"},
      {"PYTHONUNBUFFERED", "1"},
      {"DTRAIN_JOB_ID", "pi"},
      {"DTRAIN_RUN_DIR", "/tmp/dtrain-runs/pi"},
      {"DTRAIN_HOSTS", "pi-worker-[0-11]"}};
  EXPECT_EQ(plan.env, expected);
  const YAML::Node env = container(YAML::Load(plan.script), "Launcher")["env"];
  ASSERT_EQ(env.size(), 5u);
  EXPECT_EQ(env[4]["name"].Scalar(), "DTRAIN_HOSTS");
  EXPECT_EQ(env[4]["value"].Scalar(), "pi-worker-[0-11]");
  // A spec's run_dir is the pods' directory; the record of the submission stays here.
  const LaunchPlan with_dir = plan_of(kMinimal + "run_dir: /data/runs/x\n");
  EXPECT_EQ(with_dir.env[2].second, "/data/runs/x");
  EXPECT_EQ(with_dir.run_dir, "/home/ada/runs/pi-20261122-100000-42");
  EXPECT_EQ(plan_of(kMinimal).env.back().second, "pi-worker-0");
}

TEST(MpiJob, GpuAndCpuLimitsOnTheWorkersOnly) {
  const LaunchPlan plan =
      plan_of(kMinimal + "nodes: 2\nranks_per_node: 4\ngpus_per_rank: 1\ncpus_per_rank: 6\n");
  const YAML::Node m = YAML::Load(plan.script);
  const YAML::Node limits = container(m, "Worker")["resources"]["limits"];
  EXPECT_EQ(limits["nvidia.com/gpu"].as<int>(), 4);
  EXPECT_EQ(limits["cpu"].as<int>(), 24);
  EXPECT_FALSE(container(m, "Launcher")["resources"]);
  EXPECT_EQ(m["spec"]["slotsPerWorker"].as<int>(), 4);
  EXPECT_EQ(m["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"].as<int>(), 2);
  // The generic profile cannot tell whether a worker takes its whole node: dtrain bind's GPU
  // choice is said to be a risk.
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_NE(plan.warnings[0].find("set affinity.gpu: none"), std::string::npos);
  EXPECT_TRUE(plan_of(kMinimal + "gpus_per_rank: 1\naffinity: {gpu: none}\n").warnings.empty());

  // A profile of 4-GPU nodes with workers that take all 4: no warning.
  const SiteProfile four = parse_site_profile(
      "name: mycluster\nscheduler: kubernetes\nlauncher: mpirun\ngpus_per_node: 4\n"
      "required: [image]\n",
      "mycluster.yaml");
  const LaunchPlan whole = plan_of(kMinimal, four);
  EXPECT_EQ(whole.ranks_per_node, 4);  // the profile's GPUs per node
  EXPECT_EQ(container(YAML::Load(whole.script), "Worker")["resources"]["limits"]["nvidia.com/gpu"]
                .as<int>(),
            4);
  EXPECT_TRUE(whole.warnings.empty());
}

TEST(MpiJob, WalltimeNamespaceAndQueue) {
  const YAML::Node m = YAML::Load(
      plan_of(kMinimal + "walltime: \"1-00:00:30\"\nnamespace: team-a\nqueue: user-queue\n")
          .script);
  EXPECT_EQ(m["spec"]["runPolicy"]["activeDeadlineSeconds"].as<long>(), 86430);
  EXPECT_EQ(m["metadata"]["namespace"].Scalar(), "team-a");
  EXPECT_EQ(m["metadata"]["labels"]["kueue.x-k8s.io/queue-name"].Scalar(), "user-queue");
  EXPECT_EQ(m["metadata"]["labels"]["app.kubernetes.io/managed-by"].Scalar(), "dtrain");
}

// Every user string arrives in the manifest exactly as written, whatever it holds, and nothing
// in it can add YAML structure.
TEST(MpiJob, HostileStringsArriveVerbatim) {
  const std::vector<std::string> hostile = {"$(rm -rf /)",
                                            "`id`; echo pwned",
                                            "it's \"quoted\"",
                                            "two\nlines",
                                            "key: value",
                                            "- item",
                                            "#comment",
                                            "{a: b}",
                                            "*alias",
                                            "&anchor",
                                            "!!python/object",
                                            "yes",
                                            "No",
                                            "~",
                                            "null",
                                            "007",
                                            "1e3",
                                            "0x1F",
                                            "12:30",
                                            ".inf",
                                            "-1",
                                            "---",
                                            "",
                                            " leading space",
                                            "trailing:",
                                            "tab\there",
                                            "ctrl\x01"};
  YAML::Node spec = YAML::Load(kMinimal);
  spec["command"] = YAML::Node(YAML::NodeType::Sequence);
  spec["command"].push_back("./train");
  YAML::Node env(YAML::NodeType::Map);
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    spec["command"].push_back(hostile[i]);
    env["V" + std::to_string(i)] = hostile[i];
  }
  // Variable names that YAML 1.1 reads as booleans unless quoted.
  env["ON"] = "1";
  env["y"] = "2";
  spec["env"] = env;
  YAML::Emitter spec_text;
  spec_text << spec;
  const LaunchPlan plan = plan_of(spec_text.c_str());
  const YAML::Node launcher = container(YAML::Load(plan.script), "Launcher");

  std::vector<std::string> command = strings(launcher["command"]);
  const std::vector<std::string> tail(command.end() - static_cast<long>(hostile.size()),
                                      command.end());
  EXPECT_EQ(tail, hostile);
  std::map<std::string, std::string> values;
  for (const auto& e : launcher["env"]) values[e["name"].Scalar()] = e["value"].Scalar();
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    EXPECT_EQ(values["V" + std::to_string(i)], hostile[i]) << "env V" << i;
  }
  EXPECT_EQ(values["ON"], "1");
  EXPECT_EQ(values["y"], "2");
  // Only the strings we know to be plain stay plain; the rest are quoted, so a YAML 1.1 reader
  // (kubectl) cannot turn "yes", "007" or "~" into a boolean, a number or null.
  for (const auto& word : hostile) {
    EXPECT_EQ(plan.script.find("\n                - " + word + "\n"), std::string::npos) << word;
  }
  EXPECT_NE(plan.script.find("- \"yes\"\n"), std::string::npos) << plan.script;
  EXPECT_NE(plan.script.find("- name: \"ON\"\n"), std::string::npos) << plan.script;
  EXPECT_NE(plan.script.find("- \"two\\nlines\"\n"), std::string::npos) << plan.script;
}

TEST(MpiJob, PlainStringsAreOnlyThoseYamlReadsBackAsStrings) {
  for (const char* plain : {"mpirun", "-n", "--gpu=closest", "/opt/x/bin/train", "a:b", "PATH",
                            "nvcr.io/nvidia/pytorch:24.05-py3", "--", "x_y.z@1+2%"}) {
    EXPECT_TRUE(is_plain_yaml_string(plain)) << plain;
  }
  for (const char* quoted :
       {"",    "2",   "-1",  "1.5", ".5",  "on",  "OFF", "Y",   "n",  "True", "NULL", "~",
        "---", "-",   "a b", "a:",  "a#b", "{x}", "[x]", "a,b", "*x", "&x",   "!x",   "'x",
        "\"x", "x\n", "<<",  "=",   "?x",  "|x",  ">x",  "%x",  "@x", "`x"}) {
    EXPECT_FALSE(is_plain_yaml_string(quoted)) << quoted;
  }
}

TEST(MpiJob, SetupRunsInTheLauncherBeforeMpirun) {
  const LaunchPlan plan =
      plan_of(kHead + "setup: [\"source /opt/venv/bin/activate\", \"echo 'hi' >&2\"]\n" +
              "command: [./pi, \"$(id)\", \"it's\"]\n");
  const YAML::Node launcher = container(YAML::Load(plan.script), "Launcher");
  const auto command = strings(launcher["command"]);
  ASSERT_EQ(command.size(), 3u);
  EXPECT_EQ(command[0], "bash");
  EXPECT_EQ(command[1], "-c");
  EXPECT_EQ(command[2],
            "set -euo pipefail\n# setup from the job spec\nset +e +u +o pipefail\n"
            "export DTRAIN_ATTEMPT=0\nsource /opt/venv/bin/activate\n"
            "echo 'hi' >&2\nset -euo pipefail\nexec mpirun --allow-run-as-root -n 1 -npernode 1 -x "
            "PATH -x "
            "LD_LIBRARY_PATH -x PYTHONUNBUFFERED -x DTRAIN_JOB_ID -x DTRAIN_RUN_DIR -x "
            "DTRAIN_HOSTS dtrain bind "
            "--gpu=closest --gpu-visibility=own --cpu=numa --nic=closest -- dtrain run-rank -- "
            "./pi '$(id)' 'it'\\''s'\n");
  // Readable in `dtrain plan`: a literal block, not one escaped line.
  EXPECT_NE(plan.script.find("                - |\n                  set -euo pipefail\n"),
            std::string::npos)
      << plan.script;
  // bash accepts the script.
  const std::string path = ::testing::TempDir() + "/mpijob_setup.sh";
  std::ofstream(path) << command[2];
  EXPECT_EQ(std::system(("bash -n '" + path + "'").c_str()), 0) << command[2];
}

TEST(MpiJob, SetupWithControlCharactersIsDoubleQuoted) {
  const LaunchPlan plan = plan_of(kMinimal + "setup: [\"export A=\\\"x\\ty\\\"\"]\n");
  const auto command = strings(container(YAML::Load(plan.script), "Launcher")["command"]);
  ASSERT_EQ(command.size(), 3u);
  EXPECT_NE(command[2].find("export A=\"x\ty\"\n"), std::string::npos) << command[2];
  EXPECT_NE(plan.script.find("- \"set -euo pipefail\\n"), std::string::npos) << plan.script;
}

// Issue 22, item 31: U+2028/U+2029, NEL and a BOM are text to YAML 1.2 but line breaks or refused
// characters to YAML 1.1 readers (kubectl's, PyYAML): the manifest escapes them (\u2028), so no
// raw one is left and every reader gets the lines back. (k8s_mpijob_schema reads it with PyYAML.)
TEST(MpiJob, SetupAndEnvWithYaml11LineBreaksAreEscaped) {
  const std::string ls = "\u2028", ps = "\u2029", nel = "\u0085", bom = "\ufeff";
  const LaunchPlan plan =
      plan_of(kHead + "setup: [\"echo 'a" + ls + "b'\", \"echo 'c" + ps + nel + bom + "d'\"]\n" +
              "env: {NOTE: \"x" + ls + "y\"}\ncommand: [./pi, \"w" + ps + "z\"]\n");
  for (const std::string& raw : {ls, ps, nel, bom}) {
    EXPECT_EQ(plan.script.find(raw), std::string::npos) << plan.script;
  }
  const YAML::Node launcher = container(YAML::Load(plan.script), "Launcher");
  const auto command = strings(launcher["command"]);
  ASSERT_EQ(command.size(), 3u);
  EXPECT_NE(command[2].find("echo 'a" + ls + "b'\necho 'c" + ps + nel + bom + "d'\n"),
            std::string::npos)
      << command[2];
  EXPECT_NE(command[2].find("./pi 'w" + ps + "z'"), std::string::npos) << command[2];
  bool found = false;
  for (const auto& e : launcher["env"]) {
    if (e["name"].Scalar() == "NOTE") found = e["value"].Scalar() == "x" + ls + "y";
  }
  EXPECT_TRUE(found) << plan.script;
}

TEST(MpiJob, ACommandLineRunsUnderBash) {
  const auto command =
      strings(container(YAML::Load(plan_of(kHead + "command: \"./pi | tee out.txt\"\n").script),
                        "Launcher")["command"]);
  const std::vector<std::string> tail(command.end() - 3, command.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"bash", "-c", "./pi | tee out.txt"}));
}

TEST(MpiJob, FieldsKubernetesCannotUseAreNamedInWarnings) {
  const LaunchPlan plan =
      plan_of(kMinimal +
              "account: proj\nfilesystems: [home]\nmodules: [cuda]\ndirectives: [\"-x\"]\n"
              "partition: gpu\ncheckpoint: {signal: USR1}\n");
  EXPECT_EQ(
      plan.warnings,
      (std::vector<std::string>{
          "site k8s runs on Kubernetes; ignoring account",
          "site k8s runs on Kubernetes; ignoring partition",
          "site k8s runs on Kubernetes; ignoring filesystems",
          "site k8s runs on Kubernetes; ignoring directives",
          "site k8s runs on Kubernetes; ignoring modules (the image carries the software)",
          "site k8s runs on Kubernetes; ignoring checkpoint (no signal before the deadline)"}));
  EXPECT_EQ(plan.env[0], (std::pair<std::string, std::string>{"PYTHONUNBUFFERED", "1"}));
  EXPECT_EQ(plan.env[1], (std::pair<std::string, std::string>{"DTRAIN_JOB_ID", "pi"}));
  EXPECT_EQ(plan.env[2].second, "/tmp/dtrain-runs/pi");
}

TEST(MpiJob, ErrorsNameTheFieldAndTheRule) {
  EXPECT_EQ(errors_of("name: pi\nsite: k8s\ncommand: [a]\n"),
            "job.yaml: image: site k8s requires it; expected it in the job spec or through --set "
            "image=...");
  EXPECT_EQ(errors_of("name: My_Job\nsite: k8s\nimage: a/b\ncommand: [a]\n"),
            "job.yaml: name: the MPI operator names the job's service and pods after it "
            "(My_Job-worker-0): expected a DNS-1035 label of lower-case letters, digits and '-', "
            "starting with a letter and ending with a letter or digit, at most 54 characters with "
            "1 worker(s), got \"My_Job\"");
  EXPECT_EQ(errors_of("name: 7up\nsite: k8s\nimage: a/b\nqueue: a@b\ncommand: [a]\n"),
            "job.yaml: name: the MPI operator names the job's service and pods after it "
            "(7up-worker-0): expected a DNS-1035 label of lower-case letters, digits and '-', "
            "starting with a letter and ending with a letter or digit, at most 54 characters with "
            "1 worker(s), got \"7up\"\n"
            "job.yaml: queue: Kueue reads it as the label kueue.x-k8s.io/queue-name: "
            "expected at most 63 letters, digits, '-', '_' or '.', starting and ending with a "
            "letter or digit, got \"a@b\"");
}

TEST(MpiJob, AnImageIsNeededEvenWhenTheProfileForgetsToRequireIt) {
  const SiteProfile mine =
      parse_site_profile("name: mine\nscheduler: kubernetes\nlauncher: mpirun\n", "mine.yaml");
  try {
    plan_of("name: pi\ncommand: [a]\n", mine);
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "job.yaml: image: site mine runs on Kubernetes; expected the container image in "
                 "the job spec or through --set image=...");
  }
}

TEST(MpiJob, NameLengthLeavesRoomForTheWorkerSuffix) {
  EXPECT_EQ(mpijob_name_problem(std::string(54, 'a'), 1), "");
  EXPECT_NE(mpijob_name_problem(std::string(55, 'a'), 1), "");
  EXPECT_EQ(mpijob_name_problem(std::string(54, 'a'), 10), "");  // ...a-worker-9: 63
  EXPECT_NE(mpijob_name_problem(std::string(54, 'a'), 11), "");  // ...a-worker-10: 64
  for (const char* bad : {"", "a-", "-a", "a.b", "a_b", "Ab", "1a"}) {
    EXPECT_NE(mpijob_name_problem(bad, 1), "") << bad;
  }
  EXPECT_EQ(mpijob_name_problem("a", 1), "");
  EXPECT_EQ(mpijob_name_problem("fashion-mnist2", 4), "");
}

TEST(Kubectl, CreateCommandAndItsOutput) {
  EXPECT_EQ(k8s().submission(), Submission::kManifest);
  EXPECT_EQ(k8s().submit_command("/r/mpijob.yaml"),
            (Argv{"kubectl", "create", "-f", "/r/mpijob.yaml", "-o", "name"}));
  EXPECT_EQ(k8s().parse_submitted("mpijob.kubeflow.org/pi\n"), "mpijob.kubeflow.org/pi");
  EXPECT_EQ(k8s().parse_submitted("Warning: something deprecated\nmpijob.kubeflow.org/a-b\n"),
            "mpijob.kubeflow.org/a-b");
  try {
    k8s().parse_submitted("error: no objects passed to create\n");
    FAIL() << "no error";
  } catch (const SubmitError& e) {
    EXPECT_STREQ(e.what(),
                 "expected the created object such as \"mpijob.kubeflow.org/pi\" in the output, "
                 "got \"error: no objects passed to create\"");
  }
  EXPECT_THROW(k8s().parse_submitted(""), SubmitError);
  EXPECT_THROW(k8s().parse_submitted("pod/pi\n"), SubmitError);
}

}  // namespace
}  // namespace dtrain::plan
