// Every field of a job spec and what it accepts (the reader table, docs/spec.md): each field's
// value is checked and stored, and a bad one gets a message naming the file, line, field, what
// was expected and what was got.
#include "plan/spec_fields.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support.hpp"

namespace dtrain::plan {
namespace {

using testing::spec_errors;

TEST(SpecFields, AnElasticNodeRangeAsksForMaxAndKeepsMin) {
  const JobSpec spec =
      parse_job_spec("name: x\ncommand: [a]\nsite: slurm\nnodes: 2..3\nrestarts: 1\n", "job.yaml");
  EXPECT_EQ(spec.nodes, 3);
  EXPECT_EQ(spec.min_nodes, 2);
  const JobSpec plain =
      parse_job_spec("name: x\ncommand: [a]\nsite: slurm\nnodes: 3\n", "job.yaml");
  EXPECT_EQ(plain.nodes, 3);
  EXPECT_EQ(plain.min_nodes, 0);
  const std::string range = "name: x\ncommand: [a]\nsite: slurm\nrestarts: 1\nnodes: ";
  EXPECT_EQ(spec_errors(range + "3..2\n"),
            "job.yaml:5: nodes: expected MIN <= MAX in the elastic range MIN..MAX, got \"3..2\" "
            "(MIN 3 > MAX 2)");
  const std::string expected =
      "job.yaml:5: nodes: expected a node count such as 4 or an elastic range MIN..MAX such as "
      "2..4 (1 <= MIN <= MAX <= 100000), got ";
  EXPECT_EQ(spec_errors(range + "0..2\n"), expected + "\"0..2\"");
  EXPECT_EQ(spec_errors(range + "2..\n"), expected + "\"2..\"");
  EXPECT_EQ(spec_errors(range + "-1..2\n"), expected + "\"-1..2\"");
  EXPECT_EQ(spec_errors(range + "2..100001\n"), expected + "\"2..100001\"");
}

TEST(SpecFields, ImageAndNamespaceForKubernetes) {
  const JobSpec spec = parse_job_spec(
      "name: x\ncommand: [a]\nimage: nvcr.io/nvidia/pytorch:24.05-py3\nnamespace: ml-team\n",
      "job.yaml");
  EXPECT_EQ(spec.image, "nvcr.io/nvidia/pytorch:24.05-py3");
  EXPECT_EQ(spec.k8s_namespace, "ml-team");
  for (const char* good :
       {"ubuntu", "library/ubuntu:22.04", "localhost:5000/a/b_c__d-e:Tag.1",
        "ghcr.io/me/train@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "registry.example.com/team/pi:1"}) {
    EXPECT_EQ(
        parse_job_spec(std::string("name: x\ncommand: [a]\nimage: \"") + good + "\"\n", "job.yaml")
            .image,
        good);
  }
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nimage: \"Ubuntu:22.04\"\n"),
            "job.yaml:3: image: expected a container image reference such as "
            "nvcr.io/nvidia/pytorch:24.05-py3 or ghcr.io/me/train@sha256:<digest>, got "
            "\"Ubuntu:22.04\"");
  for (const char* bad : {"a b", "a/b:", "a//b", "-a", "a:tag with space", "a;rm -rf /"}) {
    EXPECT_NE(spec_errors(std::string("name: x\ncommand: [a]\nimage: \"") + bad + "\"\n"),
              "(no error)")
        << bad;
  }
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nnamespace: Team_A\n"),
            "job.yaml:3: namespace: expected a Kubernetes namespace (1 to 63 lower-case letters, "
            "digits and '-', starting and ending with a letter or digit), got \"Team_A\"");
  EXPECT_NE(spec_errors("name: x\ncommand: [a]\nnamespace: " + std::string(64, 'a') + "\n"),
            "(no error)");
}

TEST(SpecFields, WordsTooLongToExecAndRunDirNamesTooLongToCreateAreRefused) {
  const std::string longest(128 * 1024 - 1, 'a');
  EXPECT_EQ(spec_errors("name: x\ncommand: [a, " + longest + "]\n"), "(no error)");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a, " + longest + "b]\n"),
            "job.yaml:2: command[1]: expected at most 131071 bytes (Linux passes no longer "
            "argument to a program: MAX_ARG_STRLEN), got 131072 bytes");
  EXPECT_EQ(spec_errors("name: x\ncommand: \"echo " + longest + "\"\n"),
            "job.yaml:2: command: expected at most 131071 bytes (Linux passes no longer argument "
            "to a program: MAX_ARG_STRLEN), got 131076 bytes");
  const std::string name255(255, 'd');
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nrun_dir: /scratch/" + name255 + "/r\n"),
            "(no error)");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nrun_dir: /scratch/" + name255 + "d/r\n"),
            "job.yaml:3: run_dir: expected path components of at most 255 bytes (NAME_MAX), got "
            "one of 256 bytes starting \"dddddddddddddddddddd\"");
}

TEST(SpecFields, CommandWordsMustBeStrings) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a, [b]]\n"),
            "job.yaml:2: command[1]: expected a string, got a list");
  EXPECT_EQ(spec_errors("name: x\ncommand: []\n"),
            "job.yaml:2: command: expected at least one word, got an empty list");
}

TEST(SpecFields, ParsesEveryField) {
  const JobSpec spec = parse_job_spec(R"(
name: bert
site: polaris
nodes: 8
ranks_per_node: 4
gpus_per_rank: 1
cpus_per_rank: 8
walltime: "01:30:00"
account: MyProj
queue: debug-scaling
partition: gpu
filesystems: [home, eagle]
modules: [conda/2024-04-29]
setup: ["conda activate base", "cd $PBS_O_WORKDIR"]
env: {NCCL_DEBUG: WARN}
framework: torch
affinity: {gpu: identity, gpu_visibility: own-first, cpu: none, nic: all}
command: python train.py --epochs 3
checkpoint: {signal: SIGUSR1, grace: 300, requeue: true}
directives: ["-l place=scatter:group=tier1"]
)",
                                      "job.yaml");
  EXPECT_EQ(spec.site, "polaris");
  EXPECT_EQ(spec.nodes, 8);
  EXPECT_EQ(spec.gpus_per_rank, 1);
  EXPECT_EQ(spec.cpus_per_rank, 8);
  EXPECT_EQ(spec.walltime_seconds, 5400);
  EXPECT_EQ(spec.account, "MyProj");
  EXPECT_EQ(spec.queue, "debug-scaling");
  EXPECT_EQ(spec.partition, "gpu");
  EXPECT_EQ(spec.filesystems, (std::vector<std::string>{"home", "eagle"}));
  EXPECT_EQ(spec.modules, (std::vector<std::string>{"conda/2024-04-29"}));
  EXPECT_EQ(spec.setup.size(), 2u);
  EXPECT_EQ(spec.framework, launch::Framework::kTorch);
  EXPECT_EQ(spec.affinity,
            (affinity::Policy{affinity::GpuPolicy::kIdentity, affinity::GpuVisibility::kOwnFirst,
                              affinity::CpuPolicy::kNone, affinity::NicPolicy::kAll}));
  EXPECT_TRUE(spec.command_is_shell);
  EXPECT_EQ(spec.command, (std::vector<std::string>{"python train.py --epochs 3"}));
  EXPECT_TRUE(spec.checkpoint.enabled);
  EXPECT_EQ(spec.checkpoint.signal, "USR1");
  EXPECT_EQ(spec.checkpoint.grace_seconds, 300);
  EXPECT_TRUE(spec.checkpoint.requeue);
  EXPECT_EQ(spec.directives, (std::vector<std::string>{"-l place=scatter:group=tier1"}));
}

TEST(SpecFields, NestedFieldsAreCheckedWithTheirPath) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\naffinity: {gpu: closet, numa: 1}\n"),
            "job.yaml:3: affinity.gpu: expected one of: closest, identity, none, got \"closet\" "
            "(did you mean \"closest\"?)\n"
            "job.yaml:3: affinity.numa: unknown field; expected one of: gpu, gpu_visibility, cpu, "
            "nic");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\ncheckpoint:\n  signal: KILL\n  grace: 5\n"),
            "job.yaml:4: checkpoint.signal: expected one of: USR1, USR2, TERM, INT, HUP, QUIT, "
            "XCPU, URG, got \"KILL\"\n"
            "job.yaml:5: checkpoint.grace: expected an integer from 10 to 86400, got \"5\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nframework: pytorch\n"),
            "job.yaml:3: framework: expected one of: none, torch, tensorflow, jax, horovod, got "
            "\"pytorch\" (did you mean \"torch\"?)");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nfilesystems: [home, \"a b\"]\n"),
            "job.yaml:3: filesystems[1]: expected a filesystem name such as eagle (1 to 64 "
            "letters, digits, '_', '-' or '.'), got \"a b\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\ndirectives: [exclusive]\n"),
            "job.yaml:3: directives[0]: expected a scheduler option starting with '-' such as "
            "\"--exclusive\" or \"-l place=scatter\", got \"exclusive\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\naccount: \"proj; rm -rf /\"\n"),
            "job.yaml:3: account: expected an account or project name (letters, digits, '.', '_', "
            "'@', '+' or '-'), got \"proj; rm -rf /\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nwalltime: 25:00:00:00\n"),
            "job.yaml:3: walltime: expected a duration such as \"01:30:00\" (HH:MM:SS), "
            "\"1-00:00:00\" (D-HH:MM:SS) or 90 (minutes), up to 366 days, got \"25:00:00:00\"");
}

// The affinity words are runtime/affinity's: every word its parsers accept is accepted here, and
// the message lists the same words (a new policy word is one row in policy.cpp).
TEST(SpecFields, AffinityWordsAreTheAffinityLibrarys) {
  for (auto word : affinity::gpu_policy_names()) {
    const JobSpec spec = parse_job_spec(
        "name: x\ncommand: [a]\naffinity: {gpu: " + std::string(word) + "}\n", "job.yaml");
    EXPECT_EQ(affinity::to_string(spec.affinity.gpu), word);
  }
  for (auto word : affinity::nic_policy_names()) {
    const JobSpec spec = parse_job_spec(
        "name: x\ncommand: [a]\naffinity: {nic: " + std::string(word) + "}\n", "job.yaml");
    EXPECT_EQ(affinity::to_string(spec.affinity.nic), word);
  }
  for (auto word : launch::framework_names()) {
    const JobSpec spec =
        parse_job_spec("name: x\ncommand: [a]\nframework: " + std::string(word) + "\n", "job.yaml");
    EXPECT_EQ(launch::to_string(spec.framework), word);
  }
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\naffinity: {gpu_visibility: all, cpu: [numa]}\n"),
            "job.yaml:3: affinity.gpu_visibility: expected one of: own, own-first, got \"all\"\n"
            "job.yaml:3: affinity.cpu: expected a string, got a list");
}

// docs/spec.md's field table lists the reader table's fields, in its order: a field added to one
// and not the other fails here.
TEST(SpecFields, TheDocsListEveryFieldInOrder) {
  std::ifstream doc(DTRAIN_FIXTURE_DIR "/../../docs/spec.md");
  ASSERT_TRUE(doc) << "docs/spec.md";
  std::vector<std::string> documented;
  bool in_table = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("| field |", 0) == 0) in_table = true;
    if (in_table && line.empty()) break;
    if (in_table && line.rfind("| `", 0) == 0) {
      documented.push_back(line.substr(3, line.find('`', 3) - 3));
    }
  }
  EXPECT_EQ(documented, detail::field_names(detail::spec_fields()));
  EXPECT_EQ(job_spec_fields(), documented);  // the public names are the table's
}

// The same table's `framework` and `affinity` rows name every word the affinity library accepts
// (a word added in policy.cpp or framework_env.cpp without its documentation fails here).
TEST(SpecFields, TheDocsListEveryAffinityWord) {
  std::ifstream doc(DTRAIN_FIXTURE_DIR "/../../docs/spec.md");
  ASSERT_TRUE(doc) << "docs/spec.md";
  std::string framework_row;
  std::string affinity_row;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("| `framework` |", 0) == 0) framework_row = line;
    if (line.rfind("| `affinity` |", 0) == 0) affinity_row = line;
  }
  for (auto word : launch::framework_names()) {
    EXPECT_NE(framework_row.find("`" + std::string(word) + "`"), std::string::npos) << word;
  }
  for (const auto* names : {&affinity::gpu_policy_names(), &affinity::gpu_visibility_names(),
                            &affinity::cpu_policy_names(), &affinity::nic_policy_names()}) {
    for (auto word : *names) {
      EXPECT_NE(affinity_row.find("`" + std::string(word) + "`"), std::string::npos) << word;
    }
  }
}

}  // namespace
}  // namespace dtrain::plan
