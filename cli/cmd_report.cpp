// `dtrain report RUN_DIR... [-o FILE.html]`: one self-contained HTML page of a run (the job,
// throughput, step time split, stragglers, collectives, checkpoints, failures, resource use), and
// across runs the scaling study of each job. Reads the run directory through the same readers as
// `stats` and `logs --first-error`; the page model is dtrain::report's (run_page.hpp).
// docs/report.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "commands.hpp"
#include "common/errors.hpp"
#include "flag_values.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "report/report_html.hpp"
#include "report/report_page.hpp"
#include "report/run_page.hpp"
#include "report/run_series.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::vector<std::string> run_dirs;
  std::string output;
  double straggler_threshold = report::kDefaultStragglerThreshold;
};

struct ReadRun {
  report::RunPageInput page;
  std::optional<report::ScalingRun> scaling;
};

ReadRun read_run(const std::string& run_dir, double straggler_threshold) {
  require_run_dir(run_dir);
  ReadRun out;
  report::RunPageInput& in = out.page;
  in.run_dir = run_dir;
  const RunSummary summary = read_run_summary(run_dir);
  in.summary = summary;

  const auto logs = list_rank_files(run_dir, records::kLogExtension);
  const bool metrics = !list_rank_files(run_dir, records::kMetricsExtension).empty();
  if (logs.empty() && !metrics && summary.job.empty()) {
    throw UsageError("dtrain: report: " + run_dir + ": no " + std::string(records::kPlanFile) +
                     ", " + records::rank_file_pattern(records::kLogExtension) + " or " +
                     records::rank_file_pattern(records::kMetricsExtension) +
                     "; expected the run directory of a dtrain job");
  }
  std::vector<report::RankLogScan> scans;
  in.first_error = read_first_error(run_dir, logs, std::nullopt, &scans);
  for (const auto& f : logs) {
    report::RankPlace& p = in.places[f.rank];
    p.first_line = read_first_line_time(f.path);
    p.last_line = records::parse_log_timestamp(read_last_line(f.path));
  }
  // Where each rank ran in the attempt that ended the job; a rank without a start line of it
  // keeps its first start line.
  for (const auto& scan : scans) in.places[scan.rank()].start = scan.start();
  for (const auto& f : logs) {
    auto& start = in.places[f.rank].start;
    if (!start) start = read_rank_start(f.path);
  }

  if (metrics) {
    report::SeriesBuilder series;
    for (const auto& [rank, place] : in.places) {
      if (place.start) series.set_host(rank, place.start->host);
    }
    in.stats = read_run_stats(run_dir, straggler_threshold, [&](const records::MetricRecord& r) {
      series.add(r);
      report::keep_binding(in.bindings, r);
    });
    in.series = series.finish();
    out.scaling = scaling_run(summary, *in.stats);
  }
  in.attempts = read_attempt_records(run_dir);
  for (const auto& c : read_checkpoint_records(run_dir)) {
    report::CheckpointInfo info{c, std::nullopt};
    std::error_code ec;
    if (!c.bytes && fs::is_regular_file(c.path, ec)) {
      const auto size = fs::file_size(c.path, ec);
      if (!ec) info.bytes_on_disk = static_cast<long long>(size);
    }
    in.checkpoints.push_back(std::move(info));
  }
  in.job_end = read_job_end_record(run_dir);
  return out;
}

// Written under a temporary name beside the output and renamed, as `dtrain timeline` does, so a
// failure never leaves half a page or clobbers an earlier one.
void write_page(const std::string& path, const std::string& html) {
  const std::string partial = path + ".partial-" + std::to_string(::getpid());
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw UsageError("dtrain: report: -o " + path + ": cannot write it: " + std::strerror(errno));
  }
  out << html;
  out.close();
  if (!out) {
    const int error = errno;
    std::remove(partial.c_str());
    throw std::runtime_error("dtrain: report: cannot write " + path + ": " + std::strerror(error));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(partial.c_str());
    throw std::runtime_error("dtrain: report: cannot rename " + partial + " to " + path + ": " +
                             std::strerror(error));
  }
}

int run_report(const ReportOptions& opts) {
  if (!(opts.straggler_threshold > 0)) {
    throw UsageError("dtrain: report: --straggler-threshold: expected a fraction > 0, got " +
                     std::to_string(opts.straggler_threshold));
  }
  std::vector<ReadRun> runs;
  for (const auto& dir : opts.run_dirs) runs.push_back(read_run(dir, opts.straggler_threshold));
  // Scaling rows link to sections by label: two runs of the same name (from different parents)
  // get a number.
  std::map<std::string, int> seen;
  for (auto& r : runs) {
    const int n = ++seen[r.page.summary.label];
    if (n > 1) r.page.summary.label += " (" + std::to_string(n) + ")";
    if (r.scaling) r.scaling->label = r.page.summary.label;
  }
  std::vector<nlohmann::json> models;
  std::vector<report::ScalingRun> scaling;
  for (const auto& r : runs) {
    models.push_back(report::run_page_json(r.page));
    if (r.scaling) {
      scaling.push_back(*r.scaling);
    } else {
      report::ScalingRun none;  // no metric files: listed as left out
      none.label = r.page.summary.label;
      none.job = r.page.summary.job;
      scaling.push_back(none);
    }
  }
  const auto groups =
      runs.size() > 1 ? report::scaling_groups(scaling) : std::vector<report::ScalingGroup>{};
  const std::string generated = records::format_log_time(std::chrono::system_clock::now());
  std::string title = "dtrain report: " + runs.front().page.summary.label;
  if (runs.size() > 1) {
    std::set<std::string> jobs;
    for (const auto& r : runs)
      jobs.insert(r.page.summary.job.empty() ? r.page.summary.label : r.page.summary.job);
    title = "dtrain report: " + std::to_string(runs.size()) + " runs of ";
    for (auto it = jobs.begin(); it != jobs.end(); ++it) {
      title += (it == jobs.begin() ? "" : ", ") + *it;
    }
  }
  // One run: beside its records. Several: beside the first run directory (runs/report.html).
  std::string output = opts.output;
  if (output.empty()) {
    const fs::path first = fs::path(opts.run_dirs.front()).lexically_normal();
    const fs::path dir = first.filename().empty() ? first.parent_path() : first;
    output = (runs.size() == 1 ? dir / records::kReportFile
                               : (dir.has_parent_path() ? dir.parent_path() : fs::path(".")) /
                                     records::kReportFile)
                 .string();
  }
  const std::string html =
      report::report_html(report::report_json(models, groups, generated), title);
  write_page(output, html);
  std::printf("dtrain: wrote the report of %zu run%s (%zu bytes) to %s\n", runs.size(),
              runs.size() == 1 ? "" : "s", html.size(), output.c_str());
  return 0;
}

}  // namespace

void register_report(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand(
      "report", "Write one self-contained HTML page of a run (several: with their scaling study)");
  cmd->add_option("run_dir", opts->run_dirs,
                  "Run directories (runs/<name>-<id>); several compare one job at different scales")
      ->required();
  cmd->add_option("-o,--output", opts->output,
                  "Page to write (default RUN_DIR/report.html; of several runs, report.html "
                  "beside the first)");
  add_decimal_number_flag(
      *cmd, "--straggler-threshold", opts->straggler_threshold, 1e-6, 1e6,
      "Fraction over the median time per sample that makes a straggler (default 0.1)");
  cmd->callback([opts, &action] { action = [opts] { return run_report(*opts); }; });
}

}  // namespace dtrain::cli
