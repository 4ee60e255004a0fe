// Kubernetes (site k8s): the job is a Kubeflow MPI Operator MPIJob, created with kubectl.
#include "plan/schedulers/k8s.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <regex>
#include <utility>
#include <vector>

#include "plan/errors.hpp"
#include "plan/render.hpp"
#include "plan/schedulers/adapters.hpp"
#include "records/run_dir_layout.hpp"

namespace dtrain::plan {
namespace {

// The ranks call back into dtrain inside the image (on its PATH), not the dtrain that planned.
constexpr const char* kDtrainInImage = "dtrain";
// Kubernetes' limits on a label (DNS-1035/1123 labels, label values).
constexpr std::size_t kMaxLabel = 63;

// Characters that YAML 1.2 reads as text but YAML 1.1 readers (kubectl's, PyYAML) do not: U+2028
// and U+2029 are line breaks there, the C1 controls (NEL, U+0085, among them) are not printable
// or break lines, and a BOM inside a document is refused.
bool breaks_yaml11(std::string_view s) {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b0 == 0xC2 && b1 >= 0x80 && b1 <= 0x9F) return true;
    if (i + 2 < s.size()) {
      const auto b2 = static_cast<unsigned char>(s[i + 2]);
      if (b0 == 0xE2 && b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9)) return true;
      if (b0 == 0xEF && b1 == 0xBB && b2 == 0xBF) return true;
    }
  }
  return false;
}

// Double-quoted; with every non-ASCII character escaped (\u2028) when some would break a YAML 1.1
// reader, so the manifest reads back the same everywhere.
void emit_double_quoted(YAML::Emitter& out, const std::string& s) {
  if (breaks_yaml11(s)) out << YAML::EscapeNonAscii;
  out << YAML::DoubleQuoted << s;
}

void emit_string(YAML::Emitter& out, const std::string& s) {
  if (is_plain_yaml_string(s)) {
    out << s;
  } else {
    emit_double_quoted(out, s);
  }
}

// The launcher's shell script as a literal block when YAML holds it verbatim (printable text
// ending in exactly one newline; yaml-cpp's `|` adds that newline back), so `dtrain plan` shows it
// as it runs; double-quoted with escapes otherwise.
void emit_script(YAML::Emitter& out, const std::string& script) {
  bool literal = script.size() >= 2 && script.back() == '\n' && script[script.size() - 2] != '\n' &&
                 !breaks_yaml11(script);
  for (unsigned char c : script) {
    if (c != '\n' && (c < 0x20 || c == 0x7f)) literal = false;
  }
  if (literal) {
    out << YAML::Literal << script.substr(0, script.size() - 1);
  } else {
    emit_double_quoted(out, script);
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
std::vector<std::string> fields_kubernetes_ignores(const JobSpec& spec) {
  std::vector<std::string> out;
  if (!spec.account.empty()) out.emplace_back("account");
  if (!spec.partition.empty()) out.emplace_back("partition");
  if (!spec.filesystems.empty()) out.emplace_back("filesystems");
  if (!spec.directives.empty()) out.emplace_back("directives");
  if (!spec.modules.empty()) out.emplace_back("modules (the image carries the software)");
  if (spec.checkpoint.enabled) out.emplace_back("checkpoint (no signal before the deadline)");
  if (spec.restarts > 0) out.emplace_back("restarts (Kubernetes restarts the pods, not dtrain)");
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

namespace {

void check_spec(const JobSpec& spec, const std::string& source, const SiteProfile& site,
                std::vector<SpecIssue>& issues) {
  // A profile of one's own may forget `required: [image]`; a pod without an image cannot start.
  if (spec.image.empty() &&
      std::find(site.required.begin(), site.required.end(), "image") == site.required.end()) {
    issues.push_back({source, 0, "image",
                      "site " + site.name + " runs on Kubernetes; expected the container image " +
                          "in the job spec or through --set image=..."});
  }
  if (auto problem = mpijob_name_problem(spec.name, spec.nodes); !problem.empty()) {
    issues.push_back({source, 0, "name", problem});
  }
  if (!spec.queue.empty()) {
    if (auto problem = label_value_problem(spec.queue); !problem.empty()) {
      issues.push_back({source, 0, "queue", problem});
    }
  }
}

// The launcher's command: mpirun over the operator's hostfile, with the launcher's environment
// forwarded to every rank (ranks start under the workers' sshd, which gives them none of the
// container's variables).
Argv mpirun_command(const PlanDraft& d) {
  const JobShape& s = d.shape;
  // Containers often run as root, which Open MPI refuses without being told.
  Argv mpirun = {"mpirun",    "--allow-run-as-root",
                 "-n",        std::to_string(s.nodes * s.ranks_per_node),
                 "-npernode", std::to_string(s.ranks_per_node)};
  for (const char* name : {"PATH", "LD_LIBRARY_PATH"}) mpirun.insert(mpirun.end(), {"-x", name});
  for (const auto& kv : d.plan.env) mpirun.insert(mpirun.end(), {"-x", kv.first});
  mpirun.insert(mpirun.end(), d.bind.begin(), d.bind.end());
  mpirun.insert(mpirun.end(), d.run_rank.begin(), d.run_rank.end());
  return mpirun;
}

// Setup lines are the user's shell code, as on the batch sites: they run in the launcher before
// mpirun (what they export reaches the ranks only through PATH, LD_LIBRARY_PATH and env).
void emit_launcher_command(YAML::Emitter& out, const JobSpec& spec, const Argv& mpirun) {
  out << YAML::Key << "command" << YAML::Value;
  if (spec.setup.empty()) {
    emit_strings(out, mpirun);
    return;
  }
  std::string script = "set -euo pipefail\n# setup from the job spec\n" + setup_lines(spec);
  script += "exec " + shell_join(mpirun) + "\n";
  out << YAML::BeginSeq << "bash"
      << "-c";
  emit_script(out, script);
  out << YAML::EndSeq;
}

void emit_metadata(YAML::Emitter& out, const JobSpec& spec) {
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
}

void emit_run_policy(YAML::Emitter& out, const JobSpec& spec) {
  out << YAML::Key << "runPolicy" << YAML::Value << YAML::BeginMap;
  // Running: the workers go when the job ends; the finished launcher stays for `kubectl logs`.
  out << YAML::Key << "cleanPodPolicy" << YAML::Value << "Running";
  // A failed launcher is not retried, as a failed batch job is not resubmitted.
  out << YAML::Key << "backoffLimit" << YAML::Value << 0;
  if (spec.walltime_seconds) {
    out << YAML::Key << "activeDeadlineSeconds" << YAML::Value << *spec.walltime_seconds;
  }
  out << YAML::EndMap;
}

// The workers run the operator's default, `/usr/sbin/sshd -De`: mpirun starts the ranks there.
void emit_worker(YAML::Emitter& out, const JobSpec& spec, const JobShape& s) {
  const int gpus_per_worker = s.gpus_per_rank * s.ranks_per_node;
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
}

std::string manifest(const PlanDraft& d) {
  const JobSpec& spec = d.spec;
  const JobShape& s = d.shape;
  YAML::Emitter out;
  out << YAML::Comment("Generated by dtrain " + d.inputs.version + " for job " + spec.name + ": " +
                       std::to_string(s.nodes) + " worker(s) x " +
                       std::to_string(s.ranks_per_node) + " rank(s) on site " + d.site.name +
                       " (Kubeflow MPI Operator)");
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << kMpiJobApiVersion;
  out << YAML::Key << "kind" << YAML::Value << "MPIJob";
  emit_metadata(out, spec);
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "slotsPerWorker" << YAML::Value << s.ranks_per_node;
  out << YAML::Key << "mpiImplementation" << YAML::Value << "OpenMPI";
  out << YAML::Key << "sshAuthMountPath" << YAML::Value << "/root/.ssh";
  // The launcher starts once every worker's sshd is up, instead of failing its first connections.
  out << YAML::Key << "launcherCreationPolicy" << YAML::Value << "WaitForWorkersReady";
  emit_run_policy(out, spec);
  out << YAML::Key << "mpiReplicaSpecs" << YAML::Value << YAML::BeginMap;
  open_replica(out, "Launcher", "launcher", 1, "OnFailure", spec.image);
  out << YAML::Key << "env" << YAML::Value;
  emit_env(out, d.plan.env);
  emit_launcher_command(out, spec, mpirun_command(d));
  close_replica(out);
  emit_worker(out, spec, s);
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap;  // replica specs, spec
  if (!out.good()) {
    throw std::logic_error("dtrain: mpijob: the YAML emitter failed: " + out.GetLastError());
  }
  return std::string(out.c_str()) + "\n";
}

class Kubernetes final : public SchedulerAdapter {
 public:
  std::string_view name() const override { return "kubernetes"; }
  std::vector<std::string> launchers() const override {
    return {"mpirun"};
  }  // the MPI operator's OpenMPI mode: mpirun over its hostfile
  Submission submission() const override { return Submission::kManifest; }

  // Throws SpecError naming each problem: a field the site requires (image), a name that cannot
  // name the MPIJob's pods, a queue that cannot be a label value, more GPUs or CPUs than the
  // site's nodes have.
  JobShape shape(const JobSpec& spec, const std::string& source,
                 const SiteProfile& site) const override {
    std::vector<SpecIssue> issues;
    JobShape s;
    try {
      s = job_shape(spec, source, site);
    } catch (const SpecError& e) {
      issues = e.issues();
    }
    check_spec(spec, source, site, issues);
    if (!issues.empty()) throw SpecError(std::move(issues));
    return s;
  }

  void frame(PlanDraft& d) const override {
    d.plan.job_id = d.spec.name;  // the MPIJob's name is unique in its namespace while it exists
    // The record of the submission stays on the submitting machine, always under the submit
    // directory: a spec's run_dir names a directory in the pods, which this machine may not have.
    d.plan.run_dir = default_run_dir(d.inputs.workdir, d.spec.name, d.inputs.job_id);
    d.plan.script_name = records::kManifestFile;
  }

  std::string host(const PlanDraft& d, int node) const override {
    return d.spec.name + "-worker-" + std::to_string(node);
  }

  std::vector<std::string> ignored_fields(const JobSpec& spec) const override {
    return fields_kubernetes_ignores(spec);
  }
  std::string ignoring(const SiteProfile& site) const override {
    return "site " + site.name + " runs on Kubernetes";
  }

  void check(PlanDraft& d) const override {
    const int gpus_per_worker = d.shape.gpus_per_rank * d.shape.ranks_per_node;
    if (gpus_per_worker > 0 && d.spec.affinity.gpu != affinity::GpuPolicy::kNone &&
        (d.site.gpus_per_node == 0 || gpus_per_worker < d.site.gpus_per_node)) {
      d.plan.warnings.push_back(
          "site " + d.site.name +
          ": `dtrain bind` picks GPUs by their place among all GPUs of the "
          "node, but a pod sees only the " +
          std::to_string(gpus_per_worker) +
          " Kubernetes gave it; that is right only when each worker takes every GPU of its node. "
          "Otherwise set affinity.gpu: none and choose the device from DTRAIN_LOCAL_RANK");
    }
  }

  Env dtrain_variables(const PlanDraft& d) const override {
    const std::string run_dir =
        d.spec.run_dir.empty() ? std::string(kPodRunDirPrefix) + d.spec.name : d.spec.run_dir;
    return {{"DTRAIN_JOB_ID", d.plan.job_id},
            {"DTRAIN_RUN_DIR", run_dir},
            {"DTRAIN_HOSTS", worker_hosts(d.spec.name, d.shape.nodes)}};
  }

  std::string dtrain_exe(const PlanDraft&) const override { return kDtrainInImage; }

  void write(PlanDraft& d) const override { d.plan.script = manifest(d); }

  // `kubectl create -f MANIFEST -o name`. create, not apply: a second job with the name of one
  // that exists is refused (AlreadyExists) instead of patching the job in flight.
  Argv submit_command(const std::string& manifest) const override {
    return {"kubectl", "create", "-f", manifest, "-o", "name"};
  }

  // The created object, "mpijob.kubeflow.org/NAME", from the last non-empty line of the output
  // (kubectl may print warnings first).
  std::string parse_submitted(std::string_view output) const override {
    std::string_view text = output;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
      text.remove_suffix(1);
    }
    const auto nl = text.rfind('\n');
    const std::string last(nl == std::string_view::npos ? text : text.substr(nl + 1));
    static const std::regex kCreated("mpijob(\\.kubeflow\\.org)?/[a-z][-a-z0-9]{0,62}");
    if (!std::regex_match(last, kCreated)) {
      std::string shown(text.substr(0, 400));
      throw SubmitError(
          "expected the created object such as \"mpijob.kubeflow.org/pi\" in the "
          "output, got " +
          (shown.empty() ? std::string("nothing") : "\"" + shown + "\""));
    }
    return last;
  }
};

}  // namespace

const SchedulerAdapter& k8s_adapter() {
  static const Kubernetes adapter;
  return adapter;
}

}  // namespace dtrain::plan
