// `dtrain logs RUNDIR`: every rank's log merged by time with a "[rank@host]" prefix
// (--rank, --grep, --since/--until, --tail N, --follow, --collapse), or what the logs say about the
// end:
// --first-error (culprit and victims) and --hang (from the collective heartbeats). docs/logs.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "commands.hpp"
#include "common/errors.hpp"
#include "file_pool.hpp"
#include "flag_values.hpp"
#include "records/attempt_record.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "records/run_dir_layout.hpp"
#include "report/attempts.hpp"
#include "report/first_error.hpp"
#include "report/hang.hpp"
#include "report/json_text.hpp"
#include "report/log_collapse.hpp"
#include "report/log_merge.hpp"
#include "run_dir.hpp"
#include "stack_capture.hpp"

namespace dtrain::cli {
namespace {

// Read buffers of the merge, all ranks together: 256 ranks get 32 KiB each. Small buffers keep
// the lines being merged in cache; larger ones measured slower (docs/benchmarks.md).
constexpr std::size_t kMergeBufferBytes = 8u << 20;
constexpr std::size_t kMinRankBuffer = 16u << 10;
constexpr std::size_t kMaxRankBuffer = 1u << 20;
constexpr std::size_t kOutputFlushBytes = 1u << 20;
constexpr auto kFollowPoll = std::chrono::milliseconds(250);
// --follow may see logs appear later: it asks for descriptors as if this many were there.
constexpr std::size_t kFollowWantedFiles = 1u << 16;

struct LogsOptions {
  std::string run_dir;
  std::string ranks;
  std::string grep;
  std::string since;
  std::string until;
  long long tail = -1;
  bool follow = false;
  bool no_prefix = false;
  bool collapse = false;
  bool first_error = false;
  bool hang = false;
  bool json = false;
  int attempt = 0;  // --attempt N: the N-th attempt (from 1); 0 when not given
};

void write_out(const std::string& text) {
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) std::exit(0);  // the reader (head, less) is done
      throw std::runtime_error(std::string("dtrain: logs: cannot write output: ") +
                               std::strerror(errno));
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::vector<RankFile> selected_logs(const LogsOptions& opts) {
  auto files = list_rank_files(opts.run_dir, records::kLogExtension);
  if (!opts.ranks.empty()) {
    const auto wanted = report::parse_rank_list(opts.ranks);
    std::set<int> present;
    for (const auto& f : files) present.insert(f.rank);
    for (int r : wanted) {
      if (!present.count(r)) {
        throw UsageError("dtrain: logs: --rank " + opts.ranks + ": " + opts.run_dir + " has no " +
                         records::rank_file_name(r, records::kLogExtension));
      }
    }
    std::erase_if(files, [&](const RankFile& f) {
      return !std::binary_search(wanted.begin(), wanted.end(), f.rank);
    });
  }
  if (files.empty() && !opts.follow) {
    throw UsageError("dtrain: " + opts.run_dir + ": no " +
                     records::rank_file_pattern(records::kLogExtension) +
                     " files; expected the run directory of a dtrain job");
  }
  return files;
}

report::MergeInput merge_input(const RankFile& f, FilePool& pool) {
  auto start = read_rank_start(f.path);
  return {f.rank, start ? start->host : "?", pool.source(f.path)};
}

// Tracks run-rank's start and exit lines while following, to stop once every rank has ended.
class EndWatch {
 public:
  void line(int rank, std::string_view line) {
    if (!records::parse_log_timestamp(line)) return;
    const auto text = line.substr(records::kLogTimestampWidth + 1);
    if (text.rfind("dtrain: rank ", 0) != 0) {
      ended_.erase(rank);
      return;
    }
    if (auto s = records::parse_rank_start(text)) {
      world_ = s->world_size;
      ended_.erase(rank);
    } else if (records::parse_rank_exit(text)) {
      ended_.insert(rank);
    }
  }
  bool all_ended(std::size_t selected, bool all_ranks) const {
    const std::size_t expected =
        all_ranks && world_ > 0 ? static_cast<std::size_t>(world_) : selected;
    return expected > 0 && ended_.size() >= expected;
  }

 private:
  int world_ = 0;
  std::set<int> ended_;
};

// What run_merge prints: each merged line with its rank's prefix (or none), held back for
// --tail N, written out in large chunks; while following, it also learns hosts and rank ends.
class MergePrinter {
 public:
  MergePrinter(const LogsOptions& opts, const report::LogMerger& merger)
      : opts_(opts), merger_(merger) {
    out_.reserve(kOutputFlushBytes + (64u << 10));
    if (opts.tail > 0)
      last_ = std::make_unique<report::LastLines>(static_cast<std::size_t>(opts.tail));
    if (opts.collapse) {
      collapser_ = std::make_unique<report::LogCollapser>([this](std::string_view l) { put(l); });
    }
    refresh_prefixes();
  }

  // Prefixes for inputs the merger gained since the last call.
  void refresh_prefixes() {
    for (std::size_t i = prefixes_.size(); i < merger_.inputs().size(); ++i) {
      prefixes_.push_back(report::rank_prefix(merger_.inputs()[i].rank, merger_.inputs()[i].host));
      hosts_.push_back(merger_.inputs()[i].host);
      host_known_.push_back(merger_.inputs()[i].host != "?");
    }
  }

  void line(std::size_t input, std::string_view line) {
    if (opts_.follow) {
      watch_.line(merger_.inputs()[input].rank, line);
      learn_host(input, line);
    }
    if (collapser_) {
      // A line without a timestamp sorts with the line before it, and is timed so.
      last_time_ = records::parse_log_timestamp(line).value_or(last_time_);
      collapser_->add(merger_.inputs()[input].rank, hosts_[input], last_time_, line);
      return;
    }
    if (last_) {
      formatted_.clear();
      append(formatted_, input, line);
      formatted_.pop_back();
      last_->add(formatted_);
      return;
    }
    append(out_, input, line);
    if (out_.size() >= kOutputFlushBytes) write();
  }

  // --collapse: writes the groups whose window ended before `now` (microseconds), or all of them.
  void end_round(std::optional<std::int64_t> now) {
    if (!collapser_) return;
    if (now) {
      collapser_->emit_before(*now - report::kCollapseWindowMicros);
    } else {
      collapser_->emit_all();
    }
  }

  // The lines --tail N kept; later lines (while following) print as they come.
  void flush_tail() {
    if (!last_) return;
    for (const auto& l : last_->lines()) {
      out_ += l;
      out_ += '\n';
    }
    last_.reset();
  }

  void write() {
    write_out(out_);
    out_.clear();
  }

  bool all_ended(bool all_ranks) const {
    return watch_.all_ended(merger_.inputs().size(), all_ranks);
  }

 private:
  // A formatted line ('\n' included) from the collapser.
  void put(std::string_view line) {
    if (last_) {
      last_->add(line.substr(0, line.size() - 1));
      return;
    }
    out_.append(line);
    if (out_.size() >= kOutputFlushBytes) write();
  }

  void append(std::string& to, std::size_t input, std::string_view line) const {
    if (opts_.no_prefix) {
      to.append(line);
      to.push_back('\n');
    } else {
      report::append_prefixed(to, line, prefixes_[input]);
    }
  }

  // While following, a log can be opened before run-rank wrote its start line (the host): its
  // prefix is fixed when that line arrives, so --follow prints what a later `dtrain logs` prints.
  void learn_host(std::size_t input, std::string_view line) {
    if (host_known_[input] || !records::parse_log_timestamp(line)) return;
    if (auto s = records::parse_rank_start(line.substr(records::kLogTimestampWidth + 1))) {
      prefixes_[input] = report::rank_prefix(merger_.inputs()[input].rank, s->host);
      hosts_[input] = s->host;
      host_known_[input] = true;
    }
  }

  const LogsOptions& opts_;
  const report::LogMerger& merger_;
  std::vector<std::string> prefixes_;
  std::vector<std::string> hosts_;
  std::vector<bool> host_known_;
  std::string out_;
  std::string formatted_;
  std::unique_ptr<report::LastLines> last_;
  std::unique_ptr<report::LogCollapser> collapser_;
  std::int64_t last_time_ = 0;
  EndWatch watch_;
};

report::LineFilter merge_filter(const LogsOptions& opts,
                                std::unique_ptr<report::LineMatcher>& matcher) {
  report::LineFilter filter;
  if (!opts.grep.empty()) {
    matcher = std::make_unique<report::LineMatcher>(opts.grep);
    filter.grep = matcher.get();
  }
  if (!opts.since.empty()) filter.since = report::parse_time_flag(opts.since, "logs", "--since");
  if (!opts.until.empty()) filter.until = report::parse_time_flag(opts.until, "logs", "--until");
  return filter;
}

// --follow: merge what is there, then what arrives, until every rank has written its exit line
// (or the user stops it). Lines are ordered within each round of reading.
void follow(const LogsOptions& opts, FilePool& pool, report::LogMerger& merger,
            MergePrinter& printer, std::set<std::string>& open_paths) {
  const auto emit = [&](std::size_t input, std::string_view line) { printer.line(input, line); };
  const bool all_ranks = opts.ranks.empty();
  bool first_round = true;
  for (;;) {
    merger.merge_available(/*at_end=*/false, emit);
    printer.end_round(records::unix_seconds_to_micros(
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
            .count()));
    if (first_round) printer.flush_tail();  // --tail N applies to what was there at the start
    first_round = false;
    printer.write();
    if (printer.all_ended(all_ranks)) break;
    std::this_thread::sleep_for(kFollowPoll);
    if (all_ranks) {
      for (const auto& f : list_rank_files(opts.run_dir, records::kLogExtension)) {
        if (open_paths.insert(f.path).second) merger.add_input(merge_input(f, pool));
      }
      printer.refresh_prefixes();
    }
  }
  merger.merge_available(/*at_end=*/true, emit);
  printer.end_round(std::nullopt);
  printer.write();
}

int run_merge(const LogsOptions& opts) {
  std::unique_ptr<report::LineMatcher> matcher;
  const report::LineFilter filter = merge_filter(opts, matcher);
  auto files = selected_logs(opts);
  // Declared before the merger, whose sources read through it, so it is destroyed after them.
  FilePool pool(
      open_files_budget(opts.follow ? std::max(files.size(), kFollowWantedFiles) : files.size()));
  const std::size_t per_rank = std::clamp(
      kMergeBufferBytes / std::max<std::size_t>(files.size(), 1), kMinRankBuffer, kMaxRankBuffer);
  std::vector<report::MergeInput> inputs;
  std::set<std::string> open_paths;
  for (const auto& f : files) {
    inputs.push_back(merge_input(f, pool));
    open_paths.insert(f.path);
  }
  report::LogMerger merger(std::move(inputs), filter, per_rank);
  MergePrinter printer(opts, merger);
  if (opts.follow) {
    follow(opts, pool, merger, printer, open_paths);
    return 0;
  }
  merger.merge_available(/*at_end=*/true, [&](std::size_t input, std::string_view line) {
    printer.line(input, line);
  });
  printer.end_round(std::nullopt);
  printer.flush_tail();
  printer.write();
  return 0;
}

int run_first_error(const LogsOptions& opts) {
  const auto attempts = read_attempt_records(opts.run_dir);
  std::optional<int> wanted;  // from 0
  if (opts.attempt > 0) {
    const int last = report::last_attempt(attempts);
    if (opts.attempt > last + 1) {
      throw UsageError(
          "dtrain: logs: --attempt " + std::to_string(opts.attempt) + ": " + opts.run_dir +
          " has " +
          (last == 0 ? std::string("one attempt; expected --attempt 1")
                     : "attempts 1 to " + std::to_string(last + 1) + "; expected one of them"));
    }
    wanted = opts.attempt - 1;
  }
  const auto report = read_first_error(opts.run_dir, selected_logs(opts), wanted);
  // Of a job that recovered, the report covers its last attempt: say where the first failure was.
  const auto first_failed = report::first_failed_attempt(attempts);
  const bool point_back = !wanted && first_failed;
  const std::string hint =
      point_back ? "attempt " + std::to_string(*first_failed + 1) +
                       " failed first; its report: dtrain logs --first-error --attempt " +
                       std::to_string(*first_failed + 1) + " " + opts.run_dir + "\n"
                 : "";
  if (opts.json) {
    auto j = report::first_error_to_json(report);
    j["run_dir"] = opts.run_dir;
    if (!attempts.empty()) {
      j["attempt"] = wanted.value_or(report::last_attempt(attempts));
      j["attempts"] = nlohmann::json::array();
      for (const auto& a : attempts) {
        j["attempts"].push_back(
            {{"attempt", a.attempt}, {"outcome", a.outcome}, {"end", a.end}, {"cause", a.cause}});
      }
      j["first_failed_attempt"] = first_failed ? nlohmann::json(*first_failed) : nlohmann::json();
    }
    write_out(report::json_text(j, 2) + "\n");
  } else {
    write_out(report::format_attempts(attempts, wanted) + hint +
              report::format_first_error(report));
  }
  return 0;
}

int run_hang(const LogsOptions& opts) {
  require_run_dir(opts.run_dir);
  // A restarted job numbers collectives from 0 again: only the attempt that ended it counts.
  const auto attempts = read_attempt_records(opts.run_dir);
  auto tracker = read_heartbeats(opts.run_dir, report::last_attempt(attempts));
  // The stacks the hang watch took before it ended a rank (RUN_DIR/stacks), of the same attempt.
  std::vector<report::RankStacks> stacks = read_stacks(opts.run_dir);
  std::erase_if(stacks, [&](const report::RankStacks& s) {
    return s.attempt != (tracker ? tracker->attempt() : report::last_attempt(attempts));
  });
  const std::string stacks_text = stacks.empty()
                                      ? std::string()
                                      : "\nthe hang watch's stacks (" + opts.run_dir + "/" +
                                            std::string(records::kStacksDir) + ", taken " +
                                            records::format_log_time(stacks.front().taken_at_us) +
                                            "):\n" + report::format_stack_tree(stacks);
  nlohmann::json stacks_json = nlohmann::json::array();
  for (const auto& s : stacks) stacks_json.push_back(report::rank_stacks_to_json(s));
  if (!tracker && !stacks.empty()) {
    // A program without the Meter: no heartbeats, but the watch's stacks say where each rank was.
    if (opts.json) {
      write_out(report::json_text({{"run_dir", opts.run_dir},
                                   {"heartbeats", false},
                                   {"stacks", std::move(stacks_json)}},
                                  2) +
                "\n");
    } else {
      write_out(report::format_attempts(attempts) +
                "no collective heartbeats (no metric files: the program does not use the "
                "Meter)\n" +
                stacks_text);
    }
    return 0;
  }
  if (!tracker) {
    throw UsageError("dtrain: " + opts.run_dir + ": no " +
                     records::rank_file_pattern(records::kMetricsExtension) +
                     " metric files; --hang reads the collective heartbeats that libdtrain's "
                     "Meter records there");
  }
  const auto report = report::detect_hang(*tracker);
  if (opts.json) {
    auto j = report::hang_to_json(report);
    j["run_dir"] = opts.run_dir;
    j["attempt"] = tracker->attempt();
    j["stacks"] = std::move(stacks_json);
    write_out(report::json_text(j, 2) + "\n");
  } else {
    write_out(report::format_attempts(attempts) + report::format_hang(report) + stacks_text);
  }
  return 0;
}

int run_logs(const LogsOptions& opts) {
  const bool merge_flags = !opts.grep.empty() || !opts.since.empty() || !opts.until.empty() ||
                           opts.tail != -1 || opts.follow || opts.no_prefix || opts.collapse;
  if (opts.first_error && opts.hang) {
    throw UsageError("dtrain: logs: expected at most one of --first-error and --hang");
  }
  if ((opts.first_error || opts.hang) && merge_flags) {
    throw UsageError(std::string("dtrain: logs: ") +
                     (opts.first_error ? "--first-error" : "--hang") +
                     " reads whole logs; it cannot be combined with --grep, --since, "
                     "--until, --tail, --follow, --no-prefix or --collapse");
  }
  if (opts.collapse && opts.no_prefix) {
    throw UsageError(
        "dtrain: logs: --collapse names the ranks of each line in its prefix; it cannot be "
        "combined with --no-prefix");
  }
  if (opts.json && !opts.first_error && !opts.hang) {
    throw UsageError("dtrain: logs: --json applies to --first-error and --hang");
  }
  if (opts.attempt > 0 && !opts.first_error) {
    throw UsageError("dtrain: logs: --attempt applies to --first-error");
  }
  if (opts.hang && !opts.ranks.empty()) {
    throw UsageError("dtrain: logs: --hang compares all ranks; --rank cannot select some");
  }
  if (opts.first_error) return run_first_error(opts);
  if (opts.hang) return run_hang(opts);
  return run_merge(opts);
}

}  // namespace

void register_logs(CLI::App& app, Action& action) {
  auto opts = std::make_shared<LogsOptions>();
  auto* cmd = app.add_subcommand(
      "logs",
      "Merge a run's rank logs by time; name the first failing rank (--first-error) or a "
      "hang (--hang)");
  cmd->add_option("run_dir", opts->run_dir, "Run directory (runs/<name>-<id>)")->required();
  cmd->add_option("--rank", opts->ranks, "Only these ranks, e.g. 3 or 0-3,7");
  cmd->add_option("--grep", opts->grep,
                  "Only lines whose text matches this extended regular expression (grep -E)");
  cmd->add_option("--since", opts->since, "Only lines at or after this time (RFC 3339)");
  cmd->add_option("--until", opts->until, "Only lines at or before this time (RFC 3339)");
  add_whole_number_flag(*cmd, "--tail", opts->tail, 1, 1000000000, "Only the last N merged lines");
  cmd->add_flag("--follow,-f", opts->follow, "Keep printing new lines until every rank has exited");
  cmd->add_flag("--no-prefix", opts->no_prefix,
                "Print lines as they are in the files, without [rank@host]");
  cmd->add_flag("--collapse", opts->collapse,
                "Print a line that several ranks printed within 2 s once, with its ranks and "
                "hosts: [ranks 0-1023 @ 256 hosts]");
  cmd->add_flag("--first-error", opts->first_error,
                "Name the rank that failed first, why, and the ranks that failed because of it");
  cmd->add_flag("--hang", opts->hang,
                "From the collective heartbeats: ranks that never entered or never left a "
                "collective the others reached; and the stacks the hang watch took");
  add_whole_number_flag(*cmd, "--attempt", opts->attempt, 1, records::kMaxAttempt + 1,
                        "With --first-error: report this attempt of a job that restarted (1 is "
                        "the first) instead of the last");
  cmd->add_flag("--json", opts->json, "Print --first-error or --hang as JSON");
  cmd->callback([opts, &action] { action = [opts] { return run_logs(*opts); }; });
}

}  // namespace dtrain::cli
