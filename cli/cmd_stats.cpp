// `dtrain stats RUNDIR [--json]`: per-rank and total samples/s from the ranks' metric records.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "plan/stats.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

struct StatsOptions {
  std::string run_dir;
  bool json = false;
};

int run_stats(const StatsOptions& opts) {
  const auto stats = plan::compute_stats(read_metric_records(opts.run_dir));
  if (opts.json) {
    auto out = plan::stats_to_json(stats);
    out["run_dir"] = opts.run_dir;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("# run directory: %s\n%s", opts.run_dir.c_str(),
                plan::format_stats_table(stats).c_str());
  }
  return 0;
}

}  // namespace

void register_stats(CLI::App& app, Action& action) {
  auto opts = std::make_shared<StatsOptions>();
  auto* cmd = app.add_subcommand("stats", "Per-rank and total throughput of a run");
  cmd->add_option("run_dir", opts->run_dir, "Run directory (runs/<name>-<id>)")->required();
  cmd->add_flag("--json", opts->json, "Print JSON instead of a table");
  cmd->callback([opts, &action] { action = [opts] { return run_stats(*opts); }; });
}

}  // namespace dtrain::cli
