#include "plan/batch_planner.hpp"

#include <map>

#include "plan/errors.hpp"
#include "plan/render.hpp"

namespace dtrain::plan {
namespace {

using Shape = JobShape;

std::string two_digits(long v) { return (v < 10 ? "0" : "") + std::to_string(v); }

// Slurm: [D-]HH:MM:SS; PBS: HH:MM:SS with hours past 24; Cobalt: whole minutes, rounded up.
std::string slurm_time(long s) {
  const long days = s / 86400;
  s %= 86400;
  std::string hms = two_digits(s / 3600) + ":" + two_digits(s / 60 % 60) + ":" + two_digits(s % 60);
  return days > 0 ? std::to_string(days) + "-" + hms : hms;
}
std::string pbs_time(long s) {
  return two_digits(s / 3600) + ":" + two_digits(s / 60 % 60) + ":" + two_digits(s % 60);
}
std::string cobalt_minutes(long s) { return std::to_string((s + 59) / 60); }

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

bool has_field(const JobSpec& spec, const SiteProfile& site, const std::string& field) {
  if (field == "filesystems" && !site.default_filesystems.empty()) return true;
  if (field == "queue" && !site.default_queue.empty()) return true;
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

}  // namespace

JobShape job_shape(const JobSpec& spec, const std::string& source, const SiteProfile& site) {
  std::vector<SpecIssue> issues;
  for (const auto& field : site.required) {
    if (!has_field(spec, site, field)) {
      issues.push_back({source, 0, field,
                        "site " + site.name +
                            " requires it; expected it in the job spec or "
                            "through --set " +
                            field + "=..."});
    }
  }
  Shape s;
  s.nodes = spec.nodes;
  s.ranks_per_node = spec.ranks_per_node_or(site.gpus_per_node > 0 ? site.gpus_per_node : 1);
  s.gpus_per_rank =
      spec.gpus_per_rank.value_or(site.gpus_per_node >= s.ranks_per_node && s.ranks_per_node > 0
                                      ? site.gpus_per_node / s.ranks_per_node
                                      : (site.gpus_per_node > 0 ? 1 : 0));
  if (site.gpus_per_node > 0 && s.gpus_per_rank * s.ranks_per_node > site.gpus_per_node &&
      spec.gpus_per_rank.has_value()) {
    issues.push_back({source, 0, "gpus_per_rank",
                      "expected at most " + std::to_string(site.gpus_per_node) +
                          " GPUs per node on site " + site.name + ", got " +
                          std::to_string(s.ranks_per_node) + " ranks x " +
                          std::to_string(s.gpus_per_rank) + " GPUs"});
  }
  if (site.gpus_per_node > 0 && s.gpus_per_rank * s.ranks_per_node > site.gpus_per_node) {
    s.gpus_per_rank =
        0;  // more ranks than GPUs: they share the node's GPUs (the solver spreads them)
  }
  if (spec.cpus_per_rank) {
    s.cpus_per_rank = *spec.cpus_per_rank;
    const int hw = site.cores_per_node * site.threads_per_core;
    if (hw > 0 && s.cpus_per_rank * s.ranks_per_node > hw) {
      issues.push_back({source, 0, "cpus_per_rank",
                        "expected at most " + std::to_string(hw) + " CPUs per node on site " +
                            site.name + ", got " + std::to_string(s.ranks_per_node) + " ranks x " +
                            std::to_string(s.cpus_per_rank)});
    }
  } else if (site.cores_per_node > 0) {
    s.cpus_per_rank = site.cores_per_node * site.threads_per_core / s.ranks_per_node;
    if (s.cpus_per_rank < 1) s.cpus_per_rank = 0;
  }
  if (!issues.empty()) throw SpecError(std::move(issues));
  return s;
}

namespace {

std::vector<std::string> slurm_directives(const JobSpec& spec, const SiteProfile& site,
                                          const Shape& s) {
  std::vector<std::string> d = {"--job-name=" + spec.name, "--nodes=" + std::to_string(s.nodes),
                                "--ntasks-per-node=" + std::to_string(s.ranks_per_node)};
  if (s.gpus_per_rank > 0) {
    d.push_back("--gpus-per-node=" + std::to_string(s.gpus_per_rank * s.ranks_per_node));
  } else if (site.gpus_per_node > 0) {
    d.push_back("--gpus-per-node=" + std::to_string(site.gpus_per_node));
  }
  if (s.cpus_per_rank > 0) d.push_back("--cpus-per-task=" + std::to_string(s.cpus_per_rank));
  if (spec.walltime_seconds) d.push_back("--time=" + slurm_time(*spec.walltime_seconds));
  if (!spec.account.empty()) d.push_back("--account=" + spec.account);
  const std::string queue = spec.queue.empty() ? site.default_queue : spec.queue;
  if (!queue.empty()) d.push_back("--qos=" + queue);
  if (!spec.partition.empty()) d.push_back("--partition=" + spec.partition);
  if (!site.constraint.empty()) d.push_back("--constraint=" + site.constraint);
  d.push_back("--output=runs/" + spec.name + "-%j.out");
  if (spec.checkpoint.enabled) {
    // B: signals only the batch shell, which forwards it to srun (see run_launch_checkpoint).
    d.push_back("--signal=B:" + spec.checkpoint.signal + "@" +
                std::to_string(spec.checkpoint.grace_seconds));
    if (spec.checkpoint.requeue) d.push_back("--requeue");
  }
  // Slurm's default (JobRequeue=1) starts a batch job over after a node failure: from step 0
  // when the job cannot resume, into the same run directory. Only a job that asks is requeued.
  if (!(spec.checkpoint.enabled && spec.checkpoint.requeue)) d.push_back("--no-requeue");
  for (const auto& extra : spec.directives) d.push_back(extra);
  for (auto& line : d) line = "#SBATCH " + line;
  return d;
}

std::vector<std::string> pbspro_directives(const JobSpec& spec, const SiteProfile& site,
                                           const Shape& s) {
  std::string select = "select=" + std::to_string(s.nodes);
  if (!site.select.empty()) select += ":" + site.select;
  if (site.select.empty()) {
    select += ":mpiprocs=" + std::to_string(s.ranks_per_node);
    if (s.cpus_per_rank > 0)
      select += ":ncpus=" + std::to_string(s.cpus_per_rank * s.ranks_per_node);
    if (s.gpus_per_rank > 0)
      select += ":ngpus=" + std::to_string(s.gpus_per_rank * s.ranks_per_node);
  }
  std::vector<std::string> d = {"-N " + spec.name, "-l " + select};
  if (!site.place.empty()) d.push_back("-l place=" + site.place);
  if (spec.walltime_seconds) d.push_back("-l walltime=" + pbs_time(*spec.walltime_seconds));
  const auto& fs = spec.filesystems.empty() ? site.default_filesystems : spec.filesystems;
  if (!fs.empty()) d.push_back("-l filesystems=" + join(fs, ":"));
  const std::string queue = spec.queue.empty() ? site.default_queue : spec.queue;
  if (!queue.empty()) d.push_back("-q " + queue);
  if (!spec.account.empty()) d.push_back("-A " + spec.account);
  d.push_back("-j oe");
  if (spec.checkpoint.enabled && spec.checkpoint.requeue) d.push_back("-r y");
  for (const auto& extra : spec.directives) d.push_back(extra);
  for (auto& line : d) line = "#PBS " + line;
  return d;
}

std::vector<std::string> cobalt_directives(const JobSpec& spec, const SiteProfile& site,
                                           const Shape& s) {
  std::vector<std::string> d = {"-n " + std::to_string(s.nodes)};
  if (spec.walltime_seconds) d.push_back("-t " + cobalt_minutes(*spec.walltime_seconds));
  const std::string queue = spec.queue.empty() ? site.default_queue : spec.queue;
  if (!queue.empty()) d.push_back("-q " + queue);
  if (!spec.account.empty()) d.push_back("-A " + spec.account);
  const auto& fs = spec.filesystems.empty() ? site.default_filesystems : spec.filesystems;
  if (!fs.empty()) d.push_back("--attrs filesystems=" + join(fs, ","));
  d.push_back("--jobname " + spec.name);
  for (const auto& extra : spec.directives) d.push_back(extra);
  for (auto& line : d) line = "#COBALT " + line;
  return d;
}

std::vector<std::string> pbs_directives(const JobSpec& spec, const SiteProfile& site,
                                        const Shape& s) {
  const int ppn = s.ranks_per_node * (s.cpus_per_rank > 0 ? s.cpus_per_rank : 1);
  std::string nodes = "nodes=" + std::to_string(s.nodes) + ":ppn=" + std::to_string(ppn);
  if (s.gpus_per_rank > 0) nodes += ":gpus=" + std::to_string(s.gpus_per_rank * s.ranks_per_node);
  std::vector<std::string> d = {"-N " + spec.name, "-l " + nodes};
  if (spec.walltime_seconds) d.push_back("-l walltime=" + pbs_time(*spec.walltime_seconds));
  const std::string queue = spec.queue.empty() ? site.default_queue : spec.queue;
  if (!queue.empty()) d.push_back("-q " + queue);
  if (!spec.account.empty()) d.push_back("-A " + spec.account);
  d.push_back("-j oe");
  if (spec.checkpoint.enabled && spec.checkpoint.requeue) d.push_back("-r y");
  for (const auto& extra : spec.directives) d.push_back(extra);
  for (auto& line : d) line = "#PBS " + line;
  return d;
}

}  // namespace

LaunchPlan plan_batch(const JobSpec& spec, const std::string& spec_source, const SiteProfile& site,
                      const PlanInputs& inputs, const TemplateLookup& templates) {
  const Shape s = job_shape(spec, spec_source, site);
  LaunchPlan plan;
  plan.name = spec.name;
  plan.site = site.name;
  plan.nodes = s.nodes;
  plan.ranks_per_node = s.ranks_per_node;
  plan.command = rank_command(spec);
  for (int n = 0; n < s.nodes; ++n) {
    for (int l = 0; l < s.ranks_per_node; ++l) {
      plan.ranks.push_back({n * s.ranks_per_node + l, n, l, ""});
    }
  }
  const int world = s.nodes * s.ranks_per_node;
  for (const char* field : kubernetes_only_fields(spec)) {
    plan.warnings.push_back("site " + site.name + " runs no containers; ignoring " + field);
  }

  if (spec.site_env) plan.env = site.env;
  for (const auto& kv : spec.env) plan.env.push_back(kv);
  std::string exports;
  for (const auto& [k, v] : plan.env) exports += shell_export(k, v);
  std::string setup;
  if (!spec.modules.empty()) setup += "module load " + shell_join(spec.modules) + "\n";
  for (const auto& line : spec.setup) setup += line + "\n";  // the user's shell code, verbatim
  if (!setup.empty()) setup = "\n# setup from the job spec\n" + setup;

  std::vector<std::string> directives;
  std::string template_name;
  std::string requeue;
  std::vector<std::string> launcher;
  std::string srun_flags;
  switch (site.scheduler) {
    case Scheduler::kSlurm:
      directives = slurm_directives(spec, site, s);
      template_name = "slurm.sh.tmpl";
      requeue = "scontrol requeue \"$SLURM_JOB_ID\"";
      if (!site.srun_mpi.empty()) srun_flags += " --mpi=" + site.srun_mpi;
      srun_flags += " --nodes=" + std::to_string(s.nodes) +
                    " --ntasks-per-node=" + std::to_string(s.ranks_per_node);
      // Since Slurm 22.05 srun no longer inherits --cpus-per-task from the batch allocation.
      if (s.cpus_per_rank > 0) srun_flags += " --cpus-per-task=" + std::to_string(s.cpus_per_rank);
      break;
    case Scheduler::kPbsPro:
      directives = pbspro_directives(spec, site, s);
      template_name = "pbspro.sh.tmpl";
      requeue = "qrerun \"$PBS_JOBID\"";
      if (site.launcher == "mpiexec") {
        // Cray PALS: --depth counts hardware threads; one rank per `depth` cores of the node.
        const int depth = s.cpus_per_rank > 0 && site.threads_per_core > 0
                              ? std::max(1, s.cpus_per_rank / site.threads_per_core)
                              : 1;
        launcher = {"mpiexec",
                    "-n",
                    std::to_string(world),
                    "--ppn",
                    std::to_string(s.ranks_per_node),
                    "--depth",
                    std::to_string(depth),
                    "--cpu-bind",
                    "depth"};
      } else {
        launcher = {"mpirun", "-np", std::to_string(world), "-npernode",
                    std::to_string(s.ranks_per_node)};
      }
      break;
    case Scheduler::kCobalt:
      directives = cobalt_directives(spec, site, s);
      template_name = "cobalt.sh.tmpl";
      requeue = "";
      launcher = {"mpirun", "-np", std::to_string(world), "-npernode",
                  std::to_string(s.ranks_per_node)};
      break;
    case Scheduler::kPbs:
      directives = pbs_directives(spec, site, s);
      template_name = "pbs.sh.tmpl";
      requeue = "qrerun \"$PBS_JOBID\"";
      launcher = {"mpirun", "-np", std::to_string(world), "-npernode",
                  std::to_string(s.ranks_per_node)};
      break;
    case Scheduler::kLocal:
    case Scheduler::kKubernetes:  // plan_local, plan_mpijob
      throw std::logic_error("dtrain: plan_batch called for scheduler " +
                             std::string(scheduler_name(site.scheduler)));
  }

  std::string launcher_text = shell_join(launcher);
  if (site.scheduler == Scheduler::kCobalt) {
    launcher_text += " -hostfile \"$COBALT_NODEFILE\"";
  } else if (site.scheduler == Scheduler::kPbs ||
             (site.scheduler == Scheduler::kPbsPro && site.launcher == "mpirun")) {
    launcher_text += " --hostfile \"$PBS_NODEFILE\"";
  }
  if (!launcher.empty() && launcher.front() == "mpirun") {
    // Open MPI starts remote ranks with its own variables only; everything the job script set
    // for the ranks must be named.
    std::vector<std::string> forwarded = {"PATH", "LD_LIBRARY_PATH", "DTRAIN_JOB_ID",
                                          "DTRAIN_RUN_DIR", "DTRAIN_HOSTS"};
    if (spec.checkpoint.enabled) forwarded.push_back("DTRAIN_PREEMPT_SIGNALS");
    for (const auto& kv : plan.env) forwarded.push_back(kv.first);
    for (const auto& name : forwarded) launcher_text += " -x " + shell_quote(name);
  }

  std::vector<std::string> bind = {inputs.dtrain_exe, "bind"};
  for (const auto& f : bind_policy_flags(spec, "--", spec.affinity.cpu)) bind.push_back(f);
  bind.push_back("--");
  std::vector<std::string> plugin = {"--dtrain"};
  for (const auto& f : bind_policy_flags(spec, "--dtrain-", spec.affinity.cpu)) plugin.push_back(f);
  std::vector<std::string> rank = {inputs.dtrain_exe, "run-rank", "--"};
  for (const auto& w : plan.command) rank.push_back(w);

  std::string run_launch;
  if (spec.checkpoint.enabled) {
    std::string requeue_line;
    if (spec.checkpoint.requeue && !requeue.empty()) {
      requeue_line = "if [[ $status -eq " + std::to_string(kExitRequeue) + " ]]; then\n  " +
                     requeue + "\n  exit 0\nfi\n";
    }
    run_launch = render_template(templates("run_launch_checkpoint.sh.tmpl"),
                                 {{"signal", spec.checkpoint.signal},
                                  {"grace", std::to_string(spec.checkpoint.grace_seconds)},
                                  {"requeue", requeue_line}});
  } else {
    run_launch = std::string(templates("run_launch.sh.tmpl"));
  }
  if (!run_launch.empty() && run_launch.back() == '\n') run_launch.pop_back();

  const std::string run_dir =
      spec.run_dir.empty()
          ? shell_quote(inputs.workdir + "/runs/" + spec.name + "-") + "\"${DTRAIN_JOB_ID}\""
          : shell_quote(inputs.run_dir);
  plan.run_dir =
      spec.run_dir.empty() ? inputs.workdir + "/runs/" + spec.name + "-<job id>" : inputs.run_dir;

  std::map<std::string, std::string> values = {
      {"directives", join(directives, "\n")},
      {"version", inputs.version},
      {"name", spec.name},
      {"nodes", std::to_string(s.nodes)},
      {"ranks_per_node", std::to_string(s.ranks_per_node)},
      {"site", site.name},
      {"workdir", shell_quote(inputs.workdir)},
      {"run_dir", run_dir},
      {"env_exports", exports},
      {"setup", setup},
      {"bind_command", shell_join(bind)},
      {"rank_command", shell_join(rank)},
      {"run_launch", run_launch},
  };
  if (site.scheduler == Scheduler::kSlurm) {
    values["srun_flags"] = srun_flags;
    values["plugin_flags"] = shell_join(plugin);
  } else {
    values["launcher"] = launcher_text;
  }
  plan.script = render_template(templates(template_name), values);
  return plan;
}

}  // namespace dtrain::plan
