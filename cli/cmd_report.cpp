// `dtrain report RUN_DIR... [-o FILE.html]`: one self-contained HTML page of a run (the job,
// throughput, step time split, stragglers, collectives, checkpoints, failures, resource use), and
// across runs the scaling study of each job. Reads each run directory with read_run_page_input
// (run_dir_page.hpp, through the same readers as `stats` and `logs --first-error`); the page model
// is dtrain::report's (report/page/). docs/report.md.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "commands.hpp"
#include "common/errors.hpp"
#include "flag_values.hpp"
#include "output_file.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "report/page/report_html.hpp"
#include "report/page/report_page.hpp"
#include "report/page/run_page.hpp"
#include "run_dir_page.hpp"

namespace dtrain::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::vector<std::string> run_dirs;
  std::string output_text;
  std::optional<std::string> output;  // output_text when -o was given (-o "" is refused)
  double straggler_threshold = report::kDefaultStragglerThreshold;
};

// The page: -o, or of one run beside its records, of several beside the first run directory
// (runs/report.html).
OutputRequest page_request(const ReportOptions& opts) {
  const fs::path first = fs::path(opts.run_dirs.front()).lexically_normal();
  const fs::path dir = first.filename().empty() ? first.parent_path() : first;
  OutputRequest request;
  request.command = "report";
  request.flag = "-o";
  request.given = opts.output;
  request.default_path =
      (opts.run_dirs.size() == 1
           ? dir / records::kReportFile
           : (dir.has_parent_path() ? dir.parent_path() : fs::path(".")) / records::kReportFile)
          .string();
  request.default_name = records::kReportFile;
  request.standard_output_allowed = true;
  return request;
}

int run_report(const ReportOptions& opts) {
  if (!(opts.straggler_threshold > 0)) {
    throw UsageError("dtrain: report: --straggler-threshold: expected a fraction > 0, got " +
                     std::to_string(opts.straggler_threshold));
  }
  // Where the page goes is decided before any run is read: a refused path costs nothing.
  const OutputTarget target = resolve_output(page_request(opts), opts.run_dirs);
  const auto now = std::chrono::system_clock::now();
  const std::int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  std::vector<RunPageRead> runs;
  for (const auto& dir : opts.run_dirs) {
    runs.push_back(read_run_page_input(dir, opts.straggler_threshold, now_us));
  }
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
  const std::string generated = records::format_log_time(now);
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
  const std::string html =
      report::report_html(report::report_json(models, groups, generated), title);
  write_file_atomically(target, html);
  // The page on standard output is not to be followed by this line.
  std::fprintf(target.standard_output ? stderr : stdout,
               "dtrain: wrote the report of %zu run%s (%zu bytes) to %s\n", runs.size(),
               runs.size() == 1 ? "" : "s", html.size(), target.shown.c_str());
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
  auto* output = cmd->add_option(
      "-o,--output", opts->output_text,
      "Page to write: a file, a directory (for report.html in it) or - for standard "
      "output (default RUN_DIR/report.html; of several runs, report.html beside the "
      "first)");
  add_decimal_number_flag(
      *cmd, "--straggler-threshold", opts->straggler_threshold, 1e-6, 1e6,
      "Fraction over the median of the other ranks' time per sample that makes a "
      "straggler (default 0.1)");
  cmd->callback([opts, output, &action] {
    if (output->count() > 0) opts->output = opts->output_text;
    action = [opts] { return run_report(*opts); };
  });
}

}  // namespace dtrain::cli
