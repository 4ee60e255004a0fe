// `dtrain bind [--topology FILE] [policy flags] [--dry-run [--json]] -- CMD ARGS...`: the exec
// wrapper for launchers without dtrain's SPANK plugin (mpirun, mpiexec/PALS, srun without the
// plugin). It learns its local rank and size from the launcher's variables, takes its entry of the
// rank map, binds its CPUs (only when the topology is this machine's), exports the rank's
// environment and execs CMD, so CMD's exit status is the wrapper's. Binding happens here, at
// process birth, before any runtime thread exists to inherit the wrong mask.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "affinity/affinity.hpp"
#include "affinity/binding.hpp"
#include "affinity/process_binding.hpp"
#include "affinity/report.hpp"
#include "affinity/topology.hpp"
#include "affinity_flags.hpp"
#include "commands.hpp"
#include "common/child_process.hpp"
#include "common/errors.hpp"
#include "common/words.hpp"
#include "flag_values.hpp"
#include "launch/framework_env.hpp"
#include "launch/launcher_env.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::cli {
namespace {

struct BindOptions {
  std::string topology;  // empty: this machine
  AffinityFlags affinity;
  std::string framework = "none";
  int local_rank = -1;  // -1: from the launcher
  int local_size = 0;   // 0: from the launcher
  bool dry_run = false;
  bool json = false;
  std::vector<std::string> command;
};

struct Place {
  std::string launcher;
  int local_rank = 0;
  int local_size = 1;
  // Where the rank sits in the whole job, for the framework's rendezvous variables.
  launch::LauncherInfo job;
};

std::string names(const std::vector<std::string>& list) { return join_alternatives(list, ", "); }

Place place_on_node(const BindOptions& opts, const launch::Environment& env) {
  if (opts.local_rank >= 0 || opts.local_size > 0) {
    if (opts.local_rank < 0 || opts.local_size <= 0 || opts.local_rank >= opts.local_size) {
      throw UsageError(
          "dtrain: bind: --local-rank/--local-size: expected both, with 0 <= rank < size, got " +
          std::to_string(opts.local_rank) + " and " + std::to_string(opts.local_size));
    }
    // The global rank still comes from the launcher when there is one; alone, the command line
    // describes a one-node job.
    auto job = launch::detect_launcher(env).value_or(launch::LauncherInfo{
        "command line", opts.local_rank, opts.local_size, opts.local_rank, opts.local_size, true});
    job.local_rank = opts.local_rank;
    job.local_size = opts.local_size;
    return {"command line", opts.local_rank, opts.local_size, job};
  }
  const auto info = launch::detect_launcher(env);
  if (!info) {
    throw launch::LauncherEnvError(
        "dtrain: bind: no launcher found; expected one of " + names(launch::launcher_variables()) +
        " (srun, mpirun, mpiexec set them) or --local-rank and --local-size, got none");
  }
  if (!info->local_known) {
    throw launch::LauncherEnvError(
        "dtrain: bind: " + info->launcher +
        ": the launcher does not say where this process sits on the node; expected a local rank "
        "and size (one of " +
        names(launch::local_rank_variables()) +
        " with its size), got only the global rank; pass --local-rank and --local-size");
  }
  return {info->launcher, info->local_rank, info->local_size, *info};
}

std::string text_report(const affinity::Node& node, const affinity::Binding& binding,
                        const Place& place, const std::vector<std::string>& command) {
  const auto& r = binding.rank();
  const auto j = affinity::rank_to_json(node, binding.map, place.local_rank);
  std::string out = "dtrain bind: local rank " + std::to_string(place.local_rank) + " of " +
                    std::to_string(place.local_size) + " (" + place.launcher + ") on " +
                    node.source + "\n";
  out += "  gpus: " +
         (r.gpus.empty() ? std::string("-") : j["gpus"].dump() + " " + j["gpu_pci"].dump()) +
         "\n  cpus: " + r.cpus.to_list() + " (numa " + std::to_string(r.numa) + ")" +
         "\n  nics: " + (r.nics.empty() ? std::string("-") : j["nics"].dump()) + "\n";
  out += binding.bind
             ? "  would bind the CPU affinity to " + r.cpus.to_list() + "\n"
             : std::string("  would not bind CPUs (") +
                   (node.is_this_machine ? "--cpu none" : "the topology is not this machine") +
                   ")\n";
  for (const auto& [k, v] : binding.environment) out += "  export " + k + "=" + v + "\n";
  if (!command.empty()) {
    out += "  exec";
    for (const auto& w : command) out += " " + w;
    out += "\n";
  }
  return out;
}

// One line per rank: ranks printing at once do not interleave.
std::string json_report(const affinity::Node& node, const affinity::Binding& binding,
                        const Place& place, const std::vector<std::string>& command) {
  nlohmann::ordered_json j;
  j["launcher"] = place.launcher;
  j["local_rank"] = place.local_rank;
  j["local_size"] = place.local_size;
  j["topology"] = node.source;
  j["this_machine"] = node.is_this_machine;
  j["bind_cpus"] = binding.bind.has_value();
  j["rank"] = affinity::rank_to_json(node, binding.map, place.local_rank);
  j["env"] = affinity::environment_to_json(binding.environment);
  j["command"] = command;
  return j.dump() + "\n";
}

int run_bind(const BindOptions& opts) {
  if (!opts.dry_run && opts.command.empty()) {
    throw UsageError("dtrain: bind: no command; expected -- CMD ARGS..., got nothing");
  }
  const affinity::Policy policy = opts.affinity.policy();
  const launch::Framework framework = launch::parse_framework(opts.framework, "--framework");

  const launch::Environment env = launch::current_environment();
  const Place place = place_on_node(opts, env);
  const bool live = opts.topology.empty();
  const affinity::Node node =
      live ? affinity::load_live_node() : affinity::load_node_xml(opts.topology);

  affinity::BindingFacts facts;
  facts.local_rank = place.local_rank;
  facts.local_size = place.local_size;
  facts.requested = opts.affinity.restriction();
  facts.grant_env = env;
  facts.inherited_env = env;
  facts.framework = framework;
  facts.placement = [&] {
    return launch::placement_from_environment(env, place.job, launch::this_hostname());
  };
  // The scheduler's GPU grant describes this machine; for an XML file it would describe the wrong
  // one, so it is only honoured live.
  const affinity::Binding binding =
      affinity::decide_binding(node, policy, facts,
                               {live ? affinity::GrantRule::kAlways : affinity::GrantRule::kNever,
                                affinity::Moment::kAtBirth});

  if (opts.dry_run) {
    const std::string out = opts.json ? json_report(node, binding, place, opts.command)
                                      : text_report(node, binding, place, opts.command);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }

  if (binding.bind) affinity::bind_this_process(*binding.bind);
  for (const auto& [k, v] : binding.environment) ::setenv(k.c_str(), v.c_str(), 1);
  std::fflush(stdout);
  return exec_in_place(opts.command, "dtrain: bind");
}

}  // namespace

void register_bind(CLI::App& app, Action& action) {
  auto opts = std::make_shared<BindOptions>();
  auto* cmd = app.add_subcommand(
      "bind", "Run CMD with this rank's GPUs, CPUs and NICs (under mpirun, mpiexec or srun)");
  add_file_flag(*cmd, "--topology", opts->topology, kTopologyFile,
                "An hwloc XML export to solve on (no CPU binding then); default: this machine");
  add_affinity_flags(*cmd, opts->affinity);
  cmd->add_option("--framework", opts->framework,
                  "Export this framework's rendezvous variables: " +
                      join_alternatives(launch::framework_names()))
      ->capture_default_str();
  add_whole_number_flag(*cmd, "--local-rank", opts->local_rank, 0, plan::kMaxRanksPerNode - 1,
                        "This process's rank on the node; default: from the launcher");
  add_whole_number_flag(*cmd, "--local-size", opts->local_size, 1, plan::kMaxRanksPerNode,
                        "Ranks on this node; default: from the launcher");
  cmd->add_flag("--dry-run", opts->dry_run, "Print what would be done; run nothing");
  cmd->add_flag("--json", opts->json, "With --dry-run: one JSON object per rank");
  cmd->add_option("command", opts->command, "The command and its arguments, after --");
  cmd->callback([opts, &action] { action = [opts] { return run_bind(*opts); }; });
}

}  // namespace dtrain::cli
