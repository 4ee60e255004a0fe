#include "plan/mpijob.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <regex>
#include <utility>
#include <vector>

#include "plan/batch_planner.hpp"
#include "plan/errors.hpp"
#include "plan/render.hpp"

namespace dtrain::plan {
namespace {

// The ranks call back into dtrain inside the image (on its PATH), not the dtrain that planned.
constexpr const char* kDtrainInImage = "dtrain";
// Kubernetes' limits on a label (DNS-1035/1123 labels, label values).
constexpr std::size_t kMaxLabel = 63;

using Env = std::vector<std::pair<std::string, std::string>>;

void emit_string(YAML::Emitter& out, const std::string& s) {
  if (is_plain_yaml_string(s)) {
    out << s;
  } else {
    out << YAML::DoubleQuoted << s;
  }
}

// The launcher's shell script as a literal block when YAML holds it verbatim (printable text
// ending in exactly one newline; yaml-cpp's `|` adds that newline back), so `dtrain plan` shows it
// as it runs; double-quoted with escapes otherwise.
void emit_script(YAML::Emitter& out, const std::string& script) {
  bool literal = script.size() >= 2 && script.back() == '\n' && script[script.size() - 2] != '\n';
  for (unsigned char c : script) {
    if (c != '\n' && (c < 0x20 || c == 0x7f)) literal = false;
  }
  if (literal) {
    out << YAML::Literal << script.substr(0, script.size() - 1);
  } else {
    out << YAML::DoubleQuoted << script;
  }
}

void emit_strings(YAML::Emitter& out, const std::vector<std::string>& words) {
  out << YAML::BeginSeq;
  for (const auto& w : words) emit_string(out, w);
  out << YAML::EndSeq;
}

void emit_env(YAML::Emitter& out, const Env& env) {
  out << YAML::BeginSeq;
  for (const auto& [name, value] : env) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value;
    emit_string(out, name);
    out << YAML::Key << "value" << YAML::Value;
    emit_string(out, value);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// Opens mpiReplicaSpecs.<role> down to its one container, with the job's image; close_replica()
// ends what this opened.
void open_replica(YAML::Emitter& out, const char* role, const char* container, int replicas,
                  const char* restart_policy, const std::string& image) {
  out << YAML::Key << role << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "replicas" << YAML::Value << replicas;
  out << YAML::Key << "restartPolicy" << YAML::Value << restart_policy;
  out << YAML::Key << "template" << YAML::Value << YAML::BeginMap << YAML::Key << "spec"
      << YAML::Value << YAML::BeginMap << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq
      << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << container;
  out << YAML::Key << "image" << YAML::Value;
  emit_string(out, image);
}

void close_replica(YAML::Emitter& out) {
  out << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;  // container..template
  out << YAML::EndMap;                                                  // the replica
}

std::string label_value_problem(const std::string& value) {
  static const std::regex kLabelValue("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");
  if (value.size() <= kMaxLabel && std::regex_match(value, kLabelValue)) return "";
  return "Kueue reads it as the label kueue.x-k8s.io/queue-name: expected at most " +
         std::to_string(kMaxLabel) +
         " letters, digits, '-', '_' or '.', starting and ending with a letter or digit, got \"" +
         value + "\"";
}

// Fields with no meaning on Kubernetes, named in warnings rather than dropped silently.
std::vector<std::string> ignored_fields(const JobSpec& spec) {
  std::vector<std::string> out;
  if (!spec.account.empty()) out.emplace_back("account");
  if (!spec.partition.empty()) out.emplace_back("partition");
  if (!spec.filesystems.empty()) out.emplace_back("filesystems");
  if (!spec.directives.empty()) out.emplace_back("directives");
  if (!spec.modules.empty()) out.emplace_back("modules (the image carries the software)");
  if (spec.checkpoint.enabled) out.emplace_back("checkpoint (no signal before the deadline)");
  return out;
}

// `<name>-worker-[0-N]`: the pods' host names (the operator sets each pod's hostname, and their
// service's domain is on every pod's DNS search path), in the host-list form DTRAIN_HOSTS takes.
std::string worker_hosts(const std::string& name, int workers) {
  const std::string prefix = name + "-worker-";
  if (workers == 1) return prefix + "0";
  return prefix + "[0-" + std::to_string(workers - 1) + "]";
}

}  // namespace

bool is_plain_yaml_string(std::string_view s) {
  if (s.empty() || s.size() > 256) return false;
  auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  // A letter, '/', or '-' before a letter or '-' ("-n", "--gpu=closest"): never a number, a
  // timestamp, .inf, an alias, a tag or a document marker.
  const bool starts_well =
      is_letter(s[0]) || s[0] == '/' ||
      (s[0] == '-' && s.size() > 1 && (is_letter(s[1]) || s[1] == '-') && s != "---");
  if (!starts_well) return false;
  for (char c : s) {
    const bool ok = is_letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' ||
                    c == '=' || c == '@' || c == '+' || c == '%' || c == '-' || c == ':';
    if (!ok) return false;
  }
  if (s.back() == ':') return false;  // "key:" would start a mapping
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // YAML 1.1's booleans and null, which kubectl's reader still resolves.
  static const std::array<std::string_view, 9> kWords = {"y",   "n",    "yes",   "no",  "on",
                                                         "off", "true", "false", "null"};
  return std::find(kWords.begin(), kWords.end(), lower) == kWords.end();
}

std::string mpijob_name_problem(std::string_view name, int workers) {
  static const std::regex kDns1035("[a-z]([-a-z0-9]*[a-z0-9])?");
  const std::string longest =
      std::string(name) + "-worker-" + std::to_string(std::max(workers, 1) - 1);
  if (std::regex_match(std::string(name), kDns1035) && longest.size() <= kMaxLabel) return "";
  const std::size_t room = kMaxLabel - (longest.size() - name.size());
  return "the MPI operator names the job's service and pods after it (" + longest +
         "): expected a DNS-1035 label of lower-case letters, digits and '-', starting with a "
         "letter and ending with a letter or digit, at most " +
         std::to_string(room) + " characters with " + std::to_string(workers) +
         " worker(s), got \"" + std::string(name) + "\"";
}

LaunchPlan plan_mpijob(const JobSpec& spec, const std::string& spec_source, const SiteProfile& site,
                       const PlanInputs& inputs) {
  std::vector<SpecIssue> issues;
  JobShape s;
  try {
    s = job_shape(spec, spec_source, site);
  } catch (const SpecError& e) {
    issues = e.issues();
  }
  // A profile of one's own may forget `required: [image]`; a pod without an image cannot start.
  if (spec.image.empty() &&
      std::find(site.required.begin(), site.required.end(), "image") == site.required.end()) {
    issues.push_back({spec_source, 0, "image",
                      "site " + site.name + " runs on Kubernetes; expected the container image " +
                          "in the job spec or through --set image=..."});
  }
  if (auto problem = mpijob_name_problem(spec.name, spec.nodes); !problem.empty()) {
    issues.push_back({spec_source, 0, "name", problem});
  }
  if (!spec.queue.empty()) {
    if (auto problem = label_value_problem(spec.queue); !problem.empty()) {
      issues.push_back({spec_source, 0, "queue", problem});
    }
  }
  if (!issues.empty()) throw SpecError(std::move(issues));

  LaunchPlan plan;
  plan.name = spec.name;
  plan.site = site.name;
  plan.job_id = spec.name;  // the MPIJob's name is unique in its namespace while it exists
  // The record of the submission stays on the submitting machine, always under the submit
  // directory: a spec's run_dir names a directory in the pods, which this machine may not have.
  plan.run_dir = inputs.workdir + "/runs/" + spec.name + "-" + inputs.job_id;
  plan.nodes = s.nodes;
  plan.ranks_per_node = s.ranks_per_node;
  plan.command = rank_command(spec);
  plan.script_name = kManifestName;
  for (int n = 0; n < s.nodes; ++n) {
    for (int l = 0; l < s.ranks_per_node; ++l) {
      plan.ranks.push_back(
          {n * s.ranks_per_node + l, n, l, spec.name + "-worker-" + std::to_string(n)});
    }
  }
  for (const auto& field : ignored_fields(spec)) {
    plan.warnings.push_back("site " + site.name + " runs on Kubernetes; ignoring " + field);
  }
  const int gpus_per_worker = s.gpus_per_rank * s.ranks_per_node;
  if (gpus_per_worker > 0 && spec.affinity.gpu != "none" &&
      (site.gpus_per_node == 0 || gpus_per_worker < site.gpus_per_node)) {
    plan.warnings.push_back(
        "site " + site.name +
        ": `dtrain bind` picks GPUs by their place among all GPUs of the "
        "node, but a pod sees only the " +
        std::to_string(gpus_per_worker) +
        " Kubernetes gave it; that is right only when each worker takes every GPU of its node. "
        "Otherwise set affinity.gpu: none and choose the device from DTRAIN_LOCAL_RANK");
  }

  // The launcher's environment, forwarded to every rank with mpirun -x: ranks start under the
  // workers' sshd, which gives them none of the container's variables.
  const std::string run_dir =
      spec.run_dir.empty() ? std::string(kPodRunDirPrefix) + spec.name : spec.run_dir;
  if (spec.site_env) plan.env = site.env;
  // The readers refuse dtrain's own variables (is_dtrain_variable), so none is set twice here.
  for (const auto& kv : spec.env) plan.env.push_back(kv);
  plan.env.emplace_back("DTRAIN_JOB_ID", plan.job_id);
  plan.env.emplace_back("DTRAIN_RUN_DIR", run_dir);
  plan.env.emplace_back("DTRAIN_HOSTS", worker_hosts(spec.name, s.nodes));

  // Containers often run as root, which Open MPI refuses without being told.
  std::vector<std::string> mpirun = {"mpirun",    "--allow-run-as-root",
                                     "-n",        std::to_string(s.nodes * s.ranks_per_node),
                                     "-npernode", std::to_string(s.ranks_per_node)};
  for (const char* name : {"PATH", "LD_LIBRARY_PATH"}) {
    mpirun.insert(mpirun.end(), {"-x", name});
  }
  for (const auto& kv : plan.env) mpirun.insert(mpirun.end(), {"-x", kv.first});
  mpirun.emplace_back(kDtrainInImage);
  mpirun.emplace_back("bind");
  for (const auto& f : bind_policy_flags(spec, "--", spec.affinity.cpu)) mpirun.push_back(f);
  mpirun.insert(mpirun.end(), {"--", kDtrainInImage, "run-rank", "--"});
  for (const auto& w : plan.command) mpirun.push_back(w);

  // Setup lines are the user's shell code, as on the batch sites: they run in the launcher before
  // mpirun (what they export reaches the ranks only through PATH, LD_LIBRARY_PATH and env).
  std::string setup_script;
  if (!spec.setup.empty()) {
    setup_script = "set -euo pipefail\n# setup from the job spec\n";
    for (const auto& line : spec.setup) setup_script += line + "\n";
    setup_script += "exec " + shell_join(mpirun) + "\n";
  }

  YAML::Emitter out;
  out << YAML::Comment("Generated by dtrain " + inputs.version + " for job " + spec.name + ": " +
                       std::to_string(s.nodes) + " worker(s) x " +
                       std::to_string(s.ranks_per_node) + " rank(s) on site " + site.name +
                       " (Kubeflow MPI Operator)");
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << kMpiJobApiVersion;
  out << YAML::Key << "kind" << YAML::Value << "MPIJob";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value;
  emit_string(out, spec.name);
  if (!spec.k8s_namespace.empty()) {
    out << YAML::Key << "namespace" << YAML::Value;
    emit_string(out, spec.k8s_namespace);
  }
  out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "app.kubernetes.io/managed-by" << YAML::Value << "dtrain";
  if (!spec.queue.empty()) {
    out << YAML::Key << "kueue.x-k8s.io/queue-name" << YAML::Value;
    emit_string(out, spec.queue);
  }
  out << YAML::EndMap << YAML::EndMap;

  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "slotsPerWorker" << YAML::Value << s.ranks_per_node;
  out << YAML::Key << "mpiImplementation" << YAML::Value << "OpenMPI";
  out << YAML::Key << "sshAuthMountPath" << YAML::Value << "/root/.ssh";
  // The launcher starts once every worker's sshd is up, instead of failing its first connections.
  out << YAML::Key << "launcherCreationPolicy" << YAML::Value << "WaitForWorkersReady";
  out << YAML::Key << "runPolicy" << YAML::Value << YAML::BeginMap;
  // Running: the workers go when the job ends; the finished launcher stays for `kubectl logs`.
  out << YAML::Key << "cleanPodPolicy" << YAML::Value << "Running";
  // A failed launcher is not retried, as a failed batch job is not resubmitted.
  out << YAML::Key << "backoffLimit" << YAML::Value << 0;
  if (spec.walltime_seconds) {
    out << YAML::Key << "activeDeadlineSeconds" << YAML::Value << *spec.walltime_seconds;
  }
  out << YAML::EndMap;

  out << YAML::Key << "mpiReplicaSpecs" << YAML::Value << YAML::BeginMap;
  open_replica(out, "Launcher", "launcher", 1, "OnFailure", spec.image);
  out << YAML::Key << "env" << YAML::Value;
  emit_env(out, plan.env);
  out << YAML::Key << "command" << YAML::Value;
  if (setup_script.empty()) {
    emit_strings(out, mpirun);
  } else {
    out << YAML::BeginSeq << "bash"
        << "-c";
    emit_script(out, setup_script);
    out << YAML::EndSeq;
  }
  close_replica(out);

  // The workers run the operator's default, `/usr/sbin/sshd -De`: mpirun starts the ranks there.
  open_replica(out, "Worker", "worker", s.nodes, "Never", spec.image);
  if (gpus_per_worker > 0 || s.cpus_per_rank > 0) {
    out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits"
        << YAML::Value << YAML::BeginMap;
    if (gpus_per_worker > 0) out << YAML::Key << "nvidia.com/gpu" << YAML::Value << gpus_per_worker;
    if (s.cpus_per_rank > 0) {
      out << YAML::Key << "cpu" << YAML::Value << s.cpus_per_rank * s.ranks_per_node;
    }
    out << YAML::EndMap << YAML::EndMap;
  }
  close_replica(out);
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap;  // replica specs, spec
  if (!out.good()) {
    throw std::logic_error("dtrain: mpijob: the YAML emitter failed: " + out.GetLastError());
  }
  plan.script = std::string(out.c_str()) + "\n";
  return plan;
}

}  // namespace dtrain::plan
