// `dtrain timeline RUNDIR -o trace.json`: every rank's steps and collectives on one time axis as a
// Chrome trace (chrome://tracing, ui.perfetto.dev). docs/logs.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "commands.hpp"
#include "common/errors.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "records/rank_lines.hpp"
#include "report/trace.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

struct TimelineOptions {
  std::string run_dir;
  std::string output;
};

int run_timeline(TimelineOptions opts) {
  require_run_dir(opts.run_dir);
  // Without -o the trace goes beside the records it is made of.
  if (opts.output.empty())
    opts.output = (std::filesystem::path(opts.run_dir) / records::kTraceFile).string();
  const auto metric_files = list_metric_files(opts.run_dir);
  // The trace is written under a temporary name beside the output and renamed when complete, so
  // a failure (a bad record halfway) leaves no truncated trace, nor clobbers an earlier one.
  // (-o /dev/stdout or a FIFO is written directly.)
  std::error_code ec;
  const bool direct = std::filesystem::exists(opts.output, ec) &&
                      !std::filesystem::is_regular_file(opts.output, ec);
  const std::string partial =
      direct ? opts.output : opts.output + ".partial-" + std::to_string(::getpid());
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw UsageError("dtrain: timeline: -o " + opts.output +
                     ": cannot write it: " + std::strerror(errno));
  }
  struct RemoveUnlessRenamed {
    const std::string& path;
    bool renamed;
    ~RemoveUnlessRenamed() {
      if (!renamed) std::remove(path.c_str());
    }
  } cleanup{partial, direct};
  report::TraceWriter writer([&out](std::string_view text) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  });
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
  out.close();
  if (!out) {
    throw std::runtime_error("dtrain: timeline: cannot write " + opts.output + ": " +
                             std::strerror(errno));
  }
  if (!direct && std::rename(partial.c_str(), opts.output.c_str()) != 0) {
    throw std::runtime_error("dtrain: timeline: cannot rename " + partial + " to " + opts.output +
                             ": " + std::strerror(errno));
  }
  cleanup.renamed = true;
  std::printf(
      "dtrain: wrote %lld trace events of %zu ranks to %s (open in ui.perfetto.dev or "
      "chrome://tracing)\n",
      writer.events(), metric_files.size(), opts.output.c_str());
  return 0;
}

}  // namespace

void register_timeline(CLI::App& app, Action& action) {
  auto opts = std::make_shared<TimelineOptions>();
  auto* cmd = app.add_subcommand(
      "timeline", "Write every rank's steps and collectives as a Chrome/Perfetto trace");
  cmd->add_option("run_dir", opts->run_dir, "Run directory (runs/<name>-<id>)")->required();
  cmd->add_option("-o,--output", opts->output,
                  "Trace file to write (JSON; default RUN_DIR/trace.json)");
  cmd->callback([opts, &action] { action = [opts] { return run_timeline(*opts); }; });
}

}  // namespace dtrain::cli
