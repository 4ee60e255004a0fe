#include "plan/planner.hpp"

#include <algorithm>

#include "plan/errors.hpp"
#include "plan/queue_rules.hpp"
#include "plan/render.hpp"
#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {
namespace {

constexpr const char* kPythonUnbuffered = "PYTHONUNBUFFERED";

bool has_field(const JobSpec& spec, const SiteProfile& site, const std::string& field) {
  if (field == "filesystems" && !site.default_filesystems.empty()) return true;
  if (field == "queue" && !site.default_queues.empty()) return true;
  if (field == "account") return !spec.account.empty();
  if (field == "walltime") return spec.walltime_seconds.has_value();
  if (field == "filesystems") return !spec.filesystems.empty();
  if (field == "queue") return !spec.queue.empty();
  if (field == "partition") return !spec.partition.empty();
  if (field == "gpus_per_rank") return spec.gpus_per_rank.has_value();
  if (field == "cpus_per_rank") return spec.cpus_per_rank.has_value();
  if (field == "ranks_per_node") return spec.ranks_per_node.has_value();
  if (field == "image") return !spec.image.empty();
  if (field == "namespace") return !spec.k8s_namespace.empty();
  return true;
}

void check_required(const JobSpec& spec, const std::string& source, const SiteProfile& site,
                    std::vector<SpecIssue>& issues) {
  for (const auto& field : site.required) {
    if (!has_field(spec, site, field)) {
      issues.push_back({source, 0, field,
                        "site " + site.name +
                            " requires it; expected it in the job spec or "
                            "through --set " +
                            field + "=..."});
    }
  }
}

// GPUs per rank: the spec's, or the site's GPUs shared out among the ranks of a node.
int gpus_per_rank(const JobSpec& spec, const std::string& source, const SiteProfile& site,
                  int ranks_per_node, std::vector<SpecIssue>& issues) {
  int gpus = spec.gpus_per_rank.value_or(site.gpus_per_node >= ranks_per_node && ranks_per_node > 0
                                             ? site.gpus_per_node / ranks_per_node
                                             : (site.gpus_per_node > 0 ? 1 : 0));
  if (site.gpus_per_node > 0 && gpus * ranks_per_node > site.gpus_per_node &&
      spec.gpus_per_rank.has_value()) {
    issues.push_back({source, 0, "gpus_per_rank",
                      "expected at most " + std::to_string(site.gpus_per_node) +
                          " GPUs per node on site " + site.name + ", got " +
                          std::to_string(ranks_per_node) + " ranks x " + std::to_string(gpus) +
                          " GPUs"});
  }
  if (site.gpus_per_node > 0 && gpus * ranks_per_node > site.gpus_per_node) {
    gpus = 0;  // more ranks than GPUs: they share the node's GPUs (the solver spreads them)
  }
  return gpus;
}

int cpus_per_rank(const JobSpec& spec, const std::string& source, const SiteProfile& site,
                  int ranks_per_node, std::vector<SpecIssue>& issues) {
  if (spec.cpus_per_rank) {
    const int cpus = *spec.cpus_per_rank;
    const int hw = site.cores_per_node * site.threads_per_core;
    if (hw > 0 && cpus * ranks_per_node > hw) {
      issues.push_back({source, 0, "cpus_per_rank",
                        "expected at most " + std::to_string(hw) + " CPUs per node on site " +
                            site.name + ", got " + std::to_string(ranks_per_node) + " ranks x " +
                            std::to_string(cpus)});
    }
    return cpus;
  }
  if (site.cores_per_node > 0) {
    const int cpus = site.cores_per_node * site.threads_per_core / ranks_per_node;
    return cpus < 1 ? 0 : cpus;
  }
  return 0;
}

// The spec's own lines, verbatim: they are the user's shell code (conda activate, ...).
std::string user_lines(const JobSpec& spec) {
  if (spec.setup.empty()) return "";
  std::string lines = "export DTRAIN_ATTEMPT=0\n";
  for (const auto& line : spec.setup) lines += line + "\n";
  return lines;
}

// The script runs under `set -euo pipefail`, which `module` and `conda activate` do not survive
// (they read unset variables and run commands that fail on the way): the setup runs with the
// options of a plain batch script, and the script's own come back after it.
std::string with_batch_options(const std::string& body) {
  return "set +e +u +o pipefail\n" + body + "set -euo pipefail\n";
}

// The site's module paths before the spec's modules: ALCF's conda modules are found only after
// `module use /soft/modulefiles`.
std::string setup_block(const JobSpec& spec, const SiteProfile& site) {
  std::string setup;
  if (!spec.modules.empty()) {
    for (const auto& dir : site.module_paths) setup += "module use " + shell_quote(dir) + "\n";
    setup += "module load " + shell_join(spec.modules) + "\n";
  }
  setup += user_lines(spec);
  if (setup.empty()) return "";
  return "\n# setup from the job spec\n" + with_batch_options(setup);
}

}  // namespace

std::string setup_lines(const JobSpec& spec) {
  return spec.setup.empty() ? "" : with_batch_options(user_lines(spec));
}

namespace {

void fill_rank_map(const SchedulerAdapter& adapter, PlanDraft& d) {
  const JobShape& s = d.shape;
  for (int n = 0; n < s.nodes; ++n) {
    const std::string host = adapter.host(d, n);
    for (int l = 0; l < s.ranks_per_node; ++l) {
      d.plan.ranks.push_back({n * s.ranks_per_node + l, n, l, host});
    }
  }
}

// The spec's records:, hang_after: and on_hang: as the variables every rank's libdtrain and logger
// read (common/run_settings.hpp), each only when the spec gives it: without the field the ranks'
// defaults hold, or a value the site's `env` sets (the spec's `env` may not set one beside its
// field: job_spec.cpp).
std::vector<std::pair<std::string, std::string>> run_setting_variables(const JobSpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  if (spec.records) {
    out.emplace_back(kRecordsVariable, record_detail_name(*spec.records));
  }
  if (spec.hang_after) out.emplace_back(kHangAfterVariable, hang_after_text(*spec.hang_after));
  if (spec.on_hang) out.emplace_back(kOnHangVariable, on_hang_name(*spec.on_hang));
  return out;
}

// Site env, then the spec's, then its run settings, then dtrain's own: a spec cannot point the run
// directory elsewhere behind the planner's back (the readers refuse dtrain's own DTRAIN_* names,
// so none of those is set twice).
// PYTHONUNBUFFERED=1 unless the site or the spec set it: a Python rank's stdout is a pipe to
// run-rank, which Python block-buffers, so its lines would carry the time of the flush and a hung
// rank's last lines would never reach its log (docs/logs.md).
void fill_env(const SchedulerAdapter& adapter, PlanDraft& d) {
  if (d.spec.site_env) d.plan.env = d.site.env;
  for (const auto& kv : d.spec.env) d.plan.env.push_back(kv);
  for (auto& kv : run_setting_variables(d.spec)) d.plan.env.push_back(std::move(kv));
  const bool user_set = std::any_of(d.plan.env.begin(), d.plan.env.end(),
                                    [](const auto& kv) { return kv.first == kPythonUnbuffered; });
  if (!user_set) d.plan.env.emplace_back(kPythonUnbuffered, "1");
  for (auto& kv : adapter.dtrain_variables(d)) d.plan.env.push_back(std::move(kv));
  for (const auto& [name, value] : d.plan.env) d.exports += shell_export(name, value);
  // Not in plan.env: the value is the directories and the job's own LD_LIBRARY_PATH, known only
  // in the job (mpirun's -x and PALS pass the variable on as it is then).
  if (d.spec.site_env && !d.site.library_path.empty()) {
    d.exports += shell_prepend_path("LD_LIBRARY_PATH", d.site.library_path);
  }
}

}  // namespace

JobShape job_shape(const JobSpec& spec, const std::string& source, const SiteProfile& site) {
  std::vector<SpecIssue> issues;
  check_required(spec, source, site, issues);
  JobShape s;
  s.nodes = spec.nodes;
  s.ranks_per_node = spec.ranks_per_node_or(site.gpus_per_node > 0 ? site.gpus_per_node : 1);
  s.gpus_per_rank = gpus_per_rank(spec, source, site, s.ranks_per_node, issues);
  s.cpus_per_rank = cpus_per_rank(spec, source, site, s.ranks_per_node, issues);
  s.queue = choose_queue(spec, source, site, issues);
  if (!issues.empty()) throw SpecError(std::move(issues));
  return s;
}

std::string default_run_dir(const std::string& workdir, const std::string& name,
                            const std::string& id) {
  return workdir + "/runs/" + name + "-" + id;
}

std::string checkpoint_timer(const CheckpointSpec& checkpoint, const std::string& seconds) {
  return "timeout --foreground --preserve-status --signal=" + checkpoint.signal + " " + seconds +
         " ";
}

std::vector<std::string> kubernetes_only_fields(const JobSpec& spec) {
  std::vector<std::string> out;
  if (!spec.image.empty()) out.emplace_back("image");
  if (!spec.k8s_namespace.empty()) out.emplace_back("namespace");
  return out;
}

std::vector<std::string> rank_command(const JobSpec& spec) {
  if (spec.command_is_shell) return {"bash", "-c", spec.command.at(0)};
  return spec.command;
}

std::vector<std::string> bind_policy_flags(const JobSpec& spec, const std::string& prefix,
                                           affinity::CpuPolicy cpu) {
  const auto& a = spec.affinity;
  auto flag = [&](const char* name, std::string_view word) {
    return prefix + name + "=" + std::string(word);
  };
  std::vector<std::string> f = {flag("gpu", affinity::to_string(a.gpu)),
                                flag("gpu-visibility", affinity::to_string(a.gpu_visibility)),
                                flag("cpu", affinity::to_string(cpu)),
                                flag("nic", affinity::to_string(a.nic))};
  if (spec.framework != launch::Framework::kNone) {
    f.push_back(flag("framework", launch::to_string(spec.framework)));
  }
  return f;
}

LaunchPlan plan(const JobSpec& spec, const std::string& spec_source, const SiteProfile& site,
                const PlanInputs& inputs, const TemplateLookup& templates) {
  const SchedulerAdapter& adapter = scheduler_of(site);
  PlanDraft d{spec, spec_source, site, inputs, templates, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  if (spec.min_nodes > 0 && !adapter.can_shrink()) {
    throw SpecError({{spec_source, 0, "nodes",
                      "expected a node count on site " + site.name + " (scheduler " +
                          std::string(adapter.name()) + "), got the elastic range " +
                          std::to_string(spec.min_nodes) + ".." + std::to_string(spec.nodes) +
                          ": only Slurm jobs carry on with fewer nodes so far"}});
  }
  if (spec.checkpoint.enabled && spec.walltime_seconds &&
      spec.checkpoint.grace_seconds >= *spec.walltime_seconds) {
    throw SpecError(
        {{spec_source, 0, "checkpoint.grace",
          "expected fewer seconds than the walltime (" + std::to_string(*spec.walltime_seconds) +
              "), got " + std::to_string(spec.checkpoint.grace_seconds)}});
  }
  d.shape = adapter.shape(spec, spec_source, site);
  d.plan.name = spec.name;
  d.plan.site = site.name;
  d.plan.nodes = d.shape.nodes;
  d.plan.ranks_per_node = d.shape.ranks_per_node;
  d.plan.command = rank_command(spec);
  adapter.frame(d);
  fill_rank_map(adapter, d);
  const std::string ignoring = adapter.ignoring(site) + "; ignoring ";
  for (const auto& field : adapter.ignored_fields(spec)) {
    d.plan.warnings.push_back(ignoring + field);
  }
  d.cpu = spec.affinity.cpu;
  adapter.check(d);
  fill_env(adapter, d);
  d.setup = setup_block(spec, site);
  const std::string dtrain = adapter.dtrain_exe(d);
  d.bind = {dtrain, "bind"};
  for (auto& f : bind_policy_flags(spec, "--", d.cpu)) d.bind.push_back(std::move(f));
  d.bind.emplace_back("--");
  d.run_rank = {dtrain, "run-rank", "--"};
  for (const auto& w : d.plan.command) d.run_rank.push_back(w);
  d.note_lost_rank = shell_join({dtrain, "note-lost-rank", "--run-dir"});
  d.launch_status = shell_join({dtrain, "launch-status", "--run-dir"});
  if (spec.restarts > 0) {
    std::vector<std::string> supervise = {
        dtrain,       "supervise",
        "--restarts", std::to_string(spec.restarts),
        "--backoff",  std::to_string(spec.restart_backoff_seconds)};
    if (spec.min_nodes > 0) {
      supervise.insert(supervise.end(), {"--min-nodes", std::to_string(spec.min_nodes)});
    }
    supervise.emplace_back("--");
    d.supervise = shell_join(supervise) + " ";
  }
  adapter.write(d);
  return std::move(d.plan);
}

}  // namespace dtrain::plan
