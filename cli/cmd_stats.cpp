// `dtrain stats RUNDIR [RUNDIR...] [--json] [--plot FILE.svg]`: per-rank and total throughput,
// stragglers, and across runs of one job at different scales, the scaling table. docs/metrics.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "flag_values.hpp"
#include "output_file.hpp"
#include "report/scaling.hpp"
#include "report/stats.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

struct StatsOptions {
  std::vector<std::string> run_dirs;
  bool json = false;
  std::string plot_text;
  std::optional<std::string> plot;  // plot_text when --plot was given (--plot "" is refused)
  double straggler_threshold = report::kDefaultStragglerThreshold;
};

int run_stats(const StatsOptions& opts) {
  // Where the plot goes is decided before any run is read: a refused path costs nothing.
  std::optional<OutputTarget> plot;
  if (opts.plot) {
    OutputRequest request;
    request.command = "stats";
    request.flag = "--plot";
    request.given = opts.plot;
    plot = resolve_output(request, opts.run_dirs);
  }
  std::vector<report::RunStats> stats;
  for (const auto& dir : opts.run_dirs)
    stats.push_back(read_run_stats(dir, opts.straggler_threshold));

  if (opts.run_dirs.size() == 1) {
    if (plot) {
      write_file_atomically(
          *plot, report::ranks_svg(
                     stats[0], "samples/s per rank: " + read_run_summary(opts.run_dirs[0]).label));
    }
    if (opts.json) {
      std::printf("%s\n", report::stats_json_text(opts.run_dirs, stats, nullptr).c_str());
    } else {
      std::printf("# run directory: %s\n%s", opts.run_dirs[0].c_str(),
                  report::format_stats_table(stats[0]).c_str());
    }
    return 0;
  }
  std::vector<report::ScalingRun> runs;
  for (std::size_t i = 0; i < stats.size(); ++i)
    runs.push_back(scaling_run(read_run_summary(opts.run_dirs[i]), stats[i]));
  const auto table = report::scaling_table(runs);
  if (plot) write_file_atomically(*plot, report::scaling_svg(table));
  if (opts.json) {
    std::printf("%s\n", report::stats_json_text(opts.run_dirs, stats, &table).c_str());
    return 0;
  }
  for (std::size_t i = 0; i < stats.size(); ++i) {
    std::printf("# run directory: %s\n%s\n", opts.run_dirs[i].c_str(),
                report::format_stats_table(stats[i]).c_str());
  }
  std::printf("%s", report::format_scaling_table(table).c_str());
  return 0;
}

}  // namespace

void register_stats(CLI::App& app, Action& action) {
  auto opts = std::make_shared<StatsOptions>();
  auto* cmd = app.add_subcommand(
      "stats", "Per-rank and total throughput of a run, stragglers; scaling across runs");
  cmd->add_option("run_dir", opts->run_dirs,
                  "Run directories (runs/<name>-<id>); several compare one job at different scales")
      ->required();
  cmd->add_flag("--json", opts->json, "Print JSON instead of tables");
  auto* plot =
      cmd->add_option("--plot", opts->plot_text,
                      "Write an SVG plot: per-rank samples/s for one run, scaling for several");
  add_decimal_number_flag(
      *cmd, "--straggler-threshold", opts->straggler_threshold, 1e-6, 1e6,
      "Fraction over the median of the other ranks' time per sample that makes a "
      "straggler (default 0.1)");
  cmd->callback([opts, plot, &action] {
    if (plot->count() > 0) opts->plot = opts->plot_text;
    action = [opts] { return run_stats(*opts); };
  });
}

}  // namespace dtrain::cli
