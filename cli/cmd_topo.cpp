// `dtrain topo [--topology FILE] [--ranks-per-node N] [policy flags] [--json]`: the node as hwloc
// sees it (GPUs, NICs, NUMA domains with their cores) and the rank map the affinity solver makes
// for it. Thin: load, solve, print (runtime/affinity/ holds every decision and both formats).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "affinity/affinity.hpp"
#include "affinity/report.hpp"
#include "affinity/topology.hpp"
#include "affinity_flags.hpp"
#include "commands.hpp"
#include "flag_values.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::cli {
namespace {

struct TopoOptions {
  std::string topology;    // empty: this machine
  int ranks_per_node = 0;  // 0: one per GPU (one in all when the node has none)
  AffinityFlags affinity;
  bool json = false;
};

int run_topo(const TopoOptions& opts) {
  const affinity::Policy policy = opts.affinity.policy();
  const affinity::Restriction restriction = opts.affinity.restriction();
  const affinity::Node node =
      opts.topology.empty() ? affinity::load_live_node() : affinity::load_node_xml(opts.topology);
  int ranks = opts.ranks_per_node;
  if (ranks == 0) {
    const std::size_t gpus = restriction.gpus ? restriction.gpus->size() : node.gpus.size();
    ranks = gpus > 0 && policy.gpu != affinity::GpuPolicy::kNone ? static_cast<int>(gpus) : 1;
  }
  const affinity::RankMap map = affinity::solve(node, ranks, policy, restriction);
  if (opts.json) {
    std::printf("%s\n", affinity::topology_to_json(node, map).dump(2).c_str());
  } else {
    std::printf("%s\n%s", affinity::node_to_text(node).c_str(),
                affinity::rank_map_to_text(node, map).c_str());
  }
  return 0;
}

}  // namespace

void register_topo(CLI::App& app, Action& action) {
  auto opts = std::make_shared<TopoOptions>();
  auto* cmd = app.add_subcommand(
      "topo", "Show the node's GPUs, NICs and NUMA domains and the rank map dtrain would use");
  add_file_flag(*cmd, "--topology", opts->topology, kTopologyFile,
                "An hwloc XML export (lstopo --of xml); default: this machine");
  add_whole_number_flag(*cmd, "--ranks-per-node", opts->ranks_per_node, 1, plan::kMaxRanksPerNode,
                        "Local ranks to place; default: one per GPU");
  add_affinity_flags(*cmd, opts->affinity);
  cmd->add_flag("--json", opts->json, "Print JSON (schema in docs/affinity.md)");
  cmd->callback([opts, &action] { action = [opts] { return run_topo(*opts); }; });
}

}  // namespace dtrain::cli
