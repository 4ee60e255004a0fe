// `dtrain plan SPEC [--site S] [--set k=v] [--json]`: the script and the rank map, submitting
// nothing and writing nothing.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "site_resolver.hpp"

namespace dtrain::cli {
namespace {

struct PlanOptions {
  std::string spec_path;
  std::string site;
  std::vector<std::string> overrides;
  bool json = false;
};

int run_plan(const PlanOptions& opts) {
  const PlannedJob job = plan_from_file(opts.spec_path, opts.site, opts.overrides);
  if (opts.json) {
    nlohmann::json out = plan::plan_to_json(job.plan);
    out["script_text"] = job.plan.script;
    out["warnings"] = job.plan.warnings;
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  for (const auto& w : job.plan.warnings) std::fprintf(stderr, "dtrain: warning: %s\n", w.c_str());
  std::printf("# site %s (%s): %d node(s) x %d rank(s)\n# rank map\n%6s %6s %6s\n",
              job.site.name.c_str(), job.site.description.c_str(), job.plan.nodes,
              job.plan.ranks_per_node, "rank", "node", "local");
  for (const auto& r : job.plan.ranks) {
    std::printf("%6d %6d %6d\n", r.rank, r.node, r.local_rank);
  }
  std::printf("# script\n%s", job.plan.script.c_str());
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
  cmd->add_flag("--json", opts->json, "Print plan.json (with the script) instead of text");
  cmd->callback([opts, &action] { action = [opts] { return run_plan(*opts); }; });
}

}  // namespace dtrain::cli
