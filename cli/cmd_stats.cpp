// `dtrain stats RUNDIR [RUNDIR...] [--json] [--plot FILE.svg]`: per-rank and total throughput,
// stragglers, and across runs of one job at different scales, the scaling table. docs/metrics.md.
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "common/errors.hpp"
#include "common/input_file.hpp"
#include "plan/job_spec.hpp"
#include "report/json_text.hpp"
#include "report/scaling.hpp"
#include "report/stats.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

struct StatsOptions {
  std::vector<std::string> run_dirs;
  bool json = false;
  std::string plot;
  double straggler_threshold = report::kDefaultStragglerThreshold;
};

// plan.json lists every rank (about 200 bytes each): 64 MiB holds 300,000.
constexpr std::size_t kMaxPlanBytes = std::size_t{64} << 20;

// The file's text; nothing when it is missing, not a regular file or over `max_bytes`.
std::optional<std::string> optional_file(const std::string& path, const std::string& what,
                                         std::size_t max_bytes) {
  try {
    return read_input_file_if_present(path, what, max_bytes);
  } catch (const InputFileError&) {
    return std::nullopt;
  }
}

// What the run directory says about the job: its name (plan.json) and GPUs per rank (job.yaml).
report::ScalingRun describe_run(const std::string& run_dir, const report::RunStats& stats) {
  report::ScalingRun run;
  run.label = std::filesystem::path(run_dir).lexically_normal().filename().string();
  if (run.label.empty())
    run.label = std::filesystem::path(run_dir).parent_path().filename().string();
  run.ranks = static_cast<int>(stats.ranks.size());
  run.samples_per_second = stats.total_samples_per_second;
  // Read as every input is (common/input_file.hpp): a FIFO or a device in their place is left
  // out like a missing file, rather than blocking or filling memory.
  const auto plan_text =
      optional_file(run_dir + "/plan.json", "a launch plan (JSON)", kMaxPlanBytes);
  if (plan_text) {
    const auto j = nlohmann::json::parse(*plan_text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("job") && j["job"].is_object() && j["job"].contains("name") &&
        j["job"]["name"].is_string()) {
      run.job = j["job"]["name"].get<std::string>();
    }
  }
  try {
    const auto spec_text =
        optional_file(run_dir + "/job.yaml", "a job spec (YAML)", plan::kMaxSpecBytes);
    const YAML::Node spec = YAML::Load(spec_text.value_or(""));
    if (spec["gpus_per_rank"]) run.gpus = run.ranks * spec["gpus_per_rank"].as<int>();
  } catch (const YAML::Exception&) {
    // No job.yaml (a run directory made by hand) or no readable GPU count: the column shows "-".
  }
  return run;
}

void write_plot(const std::string& path, const std::string& svg) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << svg;
  out.close();
  if (!out) {
    throw UsageError("dtrain: stats: --plot " + path +
                     ": cannot write it: " + std::strerror(errno));
  }
}

int run_stats(const StatsOptions& opts) {
  if (!(opts.straggler_threshold > 0)) {
    throw UsageError("dtrain: stats: --straggler-threshold: expected a fraction > 0, got " +
                     std::to_string(opts.straggler_threshold));
  }
  std::vector<report::RunStats> stats;
  for (const auto& dir : opts.run_dirs)
    stats.push_back(read_run_stats(dir, opts.straggler_threshold));

  if (opts.run_dirs.size() == 1) {
    if (!opts.plot.empty()) {
      write_plot(opts.plot,
                 report::ranks_svg(stats[0], "samples/s per rank: " +
                                                 describe_run(opts.run_dirs[0], stats[0]).label));
    }
    if (opts.json) {
      auto out = report::stats_to_json(stats[0]);
      out["run_dir"] = opts.run_dirs[0];
      std::printf("%s\n", report::json_text(out, 2).c_str());
    } else {
      std::printf("# run directory: %s\n%s", opts.run_dirs[0].c_str(),
                  report::format_stats_table(stats[0]).c_str());
    }
    return 0;
  }
  std::vector<report::ScalingRun> runs;
  for (std::size_t i = 0; i < stats.size(); ++i)
    runs.push_back(describe_run(opts.run_dirs[i], stats[i]));
  const auto table = report::scaling_table(runs);
  if (!opts.plot.empty()) write_plot(opts.plot, report::scaling_svg(table));
  if (opts.json) {
    nlohmann::json out = {{"runs", nlohmann::json::array()},
                          {"scaling", report::scaling_to_json(table)}};
    for (std::size_t i = 0; i < stats.size(); ++i) {
      auto j = report::stats_to_json(stats[i]);
      j["run_dir"] = opts.run_dirs[i];
      out["runs"].push_back(std::move(j));
    }
    std::printf("%s\n", report::json_text(out, 2).c_str());
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
  cmd->add_option("--plot", opts->plot,
                  "Write an SVG plot: per-rank samples/s for one run, scaling for several");
  cmd->add_option("--straggler-threshold", opts->straggler_threshold,
                  "Fraction over the median time per sample that makes a straggler (default 0.1)");
  cmd->callback([opts, &action] { action = [opts] { return run_stats(*opts); }; });
}

}  // namespace dtrain::cli
