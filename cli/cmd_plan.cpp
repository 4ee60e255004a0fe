// `dtrain plan SPEC [--site S] [--set k=v] [--json]`: the script and the rank map, submitting
// nothing and writing nothing.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "affinity/affinity.hpp"
#include "affinity/errors.hpp"
#include "affinity/policy.hpp"
#include "affinity/report.hpp"
#include "affinity/topology.hpp"
#include "commands.hpp"
#include "flag_values.hpp"
#include "plan/rank_ranges.hpp"
#include "planning.hpp"

namespace dtrain::cli {
namespace {

// Up to this many ranks the rank map is a line per rank; beyond, ranges of nodes (a 10,000-node
// job would otherwise print 40,000 lines).
constexpr std::size_t kMaxRankMapRows = 64;

struct PlanOptions {
  std::string spec_path;
  std::string site;
  std::vector<std::string> overrides;
  std::string topology;
  bool json = false;
};

// The node-level rank map (GPUs, cores, NICs of each local rank) when a topology is known: given
// with --topology, named by the site profile, or this machine for the local site.
std::optional<std::pair<affinity::Node, affinity::RankMap>> solve_node(const PlanOptions& opts,
                                                                       const PlannedJob& job) {
  std::string path = opts.topology;
  if (path.empty()) path = resolve_site_topology(job.spec.site, job.site);
  if (path.empty() && job.scheduler().submission() != plan::Submission::kRunHere) {
    return std::nullopt;
  }
  const affinity::Policy& policy = job.spec.affinity;
  if (!path.empty()) {
    affinity::Node node = affinity::load_node_xml(path);
    affinity::RankMap map = affinity::solve(node, job.plan.ranks_per_node, policy, {});
    return std::make_pair(std::move(node), std::move(map));
  }
  // A local run oversubscribes freely (mpirun --oversubscribe); a map this machine cannot hold is
  // a note here, not an error.
  try {
    affinity::Node node = affinity::load_live_node();
    affinity::RankMap map = affinity::solve(node, job.plan.ranks_per_node, policy, {});
    return std::make_pair(std::move(node), std::move(map));
  } catch (const affinity::TopologyError& e) {
    std::fprintf(stderr, "dtrain: note: no per-rank GPUs, cores and NICs on this machine: %s\n",
                 e.what());
    return std::nullopt;
  }
}

int run_plan(const PlanOptions& opts) {
  const PlannedJob job = plan_from_file(opts.spec_path, opts.site, opts.overrides);
  const auto node = solve_node(opts, job);
  if (opts.json) {
    nlohmann::json out = plan::plan_to_json(job.plan);
    out["script_text"] = job.plan.script;
    out["warnings"] = job.plan.warnings;
    if (node) out["node_rank_map"] = affinity::topology_to_json(node->first, node->second);
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  for (const auto& w : job.plan.warnings) std::fprintf(stderr, "dtrain: warning: %s\n", w.c_str());
  std::printf("# site %s (%s): %d node(s) x %d rank(s)\n", job.site.name.c_str(),
              job.site.description.c_str(), job.plan.nodes, job.plan.ranks_per_node);
  if (job.plan.ranks.size() <= kMaxRankMapRows) {
    std::printf("# rank map\n%6s %6s %6s\n", "rank", "node", "local");
    for (const auto& r : job.plan.ranks) {
      std::printf("%6d %6d %6d\n", r.rank, r.node, r.local_rank);
    }
  } else {
    std::printf("# rank map: %d ranks; n is the node\n%s", job.plan.world_size(),
                plan::format_node_ranges(plan::node_ranges(job.plan.ranks)).c_str());
  }
  if (node) {
    std::printf("# on every node (%s)\n%s", node->first.source.c_str(),
                affinity::rank_map_to_text(node->first, node->second).c_str());
  } else {
    std::printf(
        "# GPUs, cores and NICs per rank: the site names no node topology; pass "
        "--topology FILE (an lstopo XML of a node)\n");
  }
  const bool manifest = job.scheduler().submission() == plan::Submission::kManifest;
  std::printf("# %s\n%s", manifest ? "manifest (kubectl create -f)" : "script",
              job.plan.script.c_str());
  return 0;
}

}  // namespace

void register_plan(CLI::App& app, Action& action) {
  auto opts = std::make_shared<PlanOptions>();
  auto* cmd =
      app.add_subcommand("plan", "Show the script and rank map of a job without submitting");
  cmd->add_option("spec", opts->spec_path, "Job spec (YAML)")->required();
  cmd->add_option("--site", opts->site, "Plan for this site instead of the spec's");
  cmd->add_option("--set", opts->overrides,
                  "Override a spec field: KEY=VALUE (VALUE is YAML; KEY may be a.b)");
  add_file_flag(*cmd, "--topology", opts->topology, kTopologyFile,
                "An lstopo XML of one node, for the per-rank GPUs, cores and NICs; default: the "
                "site profile's, or this machine for the local site");
  cmd->add_flag("--json", opts->json, "Print plan.json (with the script) instead of text");
  cmd->callback([opts, &action] { action = [opts] { return run_plan(*opts); }; });
}

}  // namespace dtrain::cli
