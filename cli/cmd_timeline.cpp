// `dtrain timeline RUNDIR -o trace.json`: every rank's steps and collectives on one time axis as a
// Chrome trace (chrome://tracing, ui.perfetto.dev). docs/logs.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "flag_values.hpp"
#include "output_file.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "records/rank_lines.hpp"
#include "report/log_merge.hpp"
#include "report/trace.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

// The default bound on a trace's events: about 170 MB of JSON, which ui.perfetto.dev and
// chrome://tracing still open (a 1,024-rank x 50,000-step run at full detail holds 150 million).
constexpr long long kDefaultMaxEvents = 1000000;

struct TimelineOptions {
  std::string run_dir;
  std::string output_text;
  std::optional<std::string> output;  // output_text when -o was given (-o "" is refused)
  std::string since, until;
  long long max_events = kDefaultMaxEvents;
};

int run_timeline(const TimelineOptions& opts) {
  require_run_dir(opts.run_dir);
  OutputRequest request;
  request.command = "timeline";
  request.flag = "-o";
  request.given = opts.output;
  // Without -o the trace goes beside the records it is made of.
  request.default_path = (std::filesystem::path(opts.run_dir) / records::kTraceFile).string();
  request.default_name = records::kTraceFile;
  request.standard_output_allowed = true;
  const OutputTarget target = resolve_output(request, {opts.run_dir});
  const auto metric_files = list_metric_files(opts.run_dir);
  // Streamed as the records are read; a failure (a bad record halfway) leaves no truncated trace,
  // nor clobbers an earlier one (output_file.hpp).
  report::TraceLimits limits;
  if (!opts.since.empty())
    limits.since = report::parse_time_flag(opts.since, "timeline", "--since");
  if (!opts.until.empty())
    limits.until = report::parse_time_flag(opts.until, "timeline", "--until");
  if (opts.max_events > 0) {
    const auto ranks = static_cast<long long>(metric_files.size());
    limits.per_rank = static_cast<std::size_t>((opts.max_events + ranks - 1) / ranks);
  }
  OutputFile out(target);
  report::TraceWriter writer([&out](std::string_view text) { out.write(text); }, limits);
  const auto hosts = read_rank_hosts(opts.run_dir);
  for (const auto& f : metric_files) {
    auto it = hosts.find(f.rank);
    writer.add_rank(f.rank, it == hosts.end() ? "?" : it->second);
  }
  for_each_metric_record(opts.run_dir, [&](const records::MetricRecord& r) { writer.add(r); });
  // How each rank ended, from run-rank's last line, as a marker on its step thread.
  for (const auto& f : list_rank_files(opts.run_dir, records::kLogExtension)) {
    const std::string last = read_last_line(f.path);
    const auto t = records::parse_log_timestamp(last);
    if (!t) continue;
    if (auto exit = records::parse_rank_exit(last.substr(records::kLogTimestampWidth + 1))) {
      writer.add_instant(f.rank, *t, "rank " + records::describe_exit(*exit));
    }
  }
  writer.finish();
  out.commit();
  // The trace on standard output is not to be followed by this line.
  std::FILE* said = target.standard_output ? stderr : stdout;
  std::fprintf(said,
               "dtrain: wrote %lld trace events of %zu ranks to %s (open in ui.perfetto.dev or "
               "chrome://tracing)\n",
               writer.events(), metric_files.size(), target.shown.c_str());
  if (writer.outside_window() > 0) {
    std::fprintf(said, "dtrain: left out %lld events outside --since/--until\n",
                 writer.outside_window());
  }
  if (writer.left_out() > 0) {
    std::fprintf(said,
                 "dtrain: left out each rank's earliest events, %lld in all: each rank keeps its "
                 "last %zu (--max-events %lld over %zu ranks); --since/--until picks another "
                 "window, --max-events 0 keeps every event\n",
                 writer.left_out(), limits.per_rank, opts.max_events, metric_files.size());
  }
  return 0;
}

}  // namespace

void register_timeline(CLI::App& app, Action& action) {
  auto opts = std::make_shared<TimelineOptions>();
  auto* cmd = app.add_subcommand(
      "timeline", "Write every rank's steps and collectives as a Chrome/Perfetto trace");
  cmd->add_option("run_dir", opts->run_dir, "Run directory (runs/<name>-<id>)")->required();
  auto* output = cmd->add_option("-o,--output", opts->output_text,
                                 "Trace file to write (JSON): a file, a directory (for trace.json "
                                 "in it) or - for standard output (default RUN_DIR/trace.json)");
  cmd->add_option("--since", opts->since,
                  "Only events that end at or after this time (RFC 3339, as `logs --since`)");
  cmd->add_option("--until", opts->until, "Only events that begin at or before this time");
  add_whole_number_flag(*cmd, "--max-events", opts->max_events, 0,
                        std::numeric_limits<long long>::max(),
                        "At most this many events (steps, collectives, counters), shared among "
                        "the ranks, each keeping its last ones; 0 keeps all (default " +
                            std::to_string(kDefaultMaxEvents) + ")");
  cmd->callback([opts, output, &action] {
    if (output->count() > 0) opts->output = opts->output_text;
    action = [opts] { return run_timeline(*opts); };
  });
}

}  // namespace dtrain::cli
