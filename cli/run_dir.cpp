#include "run_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>  // plan.json
#include <stdexcept>

#include "common/errors.hpp"
#include "common/input_file.hpp"
#include "file_pool.hpp"
#include "plan/job_spec.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "records/run_dir_layout.hpp"
#include "report/attempts.hpp"
#include "report/lost_rank_notes.hpp"
#include "report/rank_log_scan.hpp"
#include "report/unreadable_logs.hpp"

namespace dtrain::cli {
namespace fs = std::filesystem;

std::string read_spec_file(const std::string& path) {
  return dtrain::read_input_file(path, "a job spec (YAML)", plan::kMaxSpecBytes);
}

void append_whole_line(const std::string& path, const std::string& record) {
  const std::string line = record + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const bool written =
      fd >= 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int error = errno;
  if (fd >= 0) ::close(fd);
  if (!written) {
    throw std::runtime_error("dtrain: cannot append to " + path + ": " + std::strerror(error));
  }
}

namespace {

void write_file(const fs::path& path, const std::string& text, fs::perms perms) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    throw std::runtime_error("dtrain: cannot write " + path.string() + ": " + std::strerror(errno));
  }
  fs::permissions(path, perms);
}

}  // namespace

void write_run_dir(const plan::LaunchPlan& plan, const std::string& spec_text) {
  const fs::path dir(plan.run_dir);
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    throw UsageError("dtrain: run directory " + plan.run_dir +
                     " already exists and is not empty; expected a new directory "
                     "(a previous run's files are never overwritten)");
  }
  fs::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error("dtrain: cannot create run directory " + plan.run_dir + ": " +
                             ec.message());
  }
  using fs::perms;
  const auto rw = perms::owner_read | perms::owner_write | perms::group_read | perms::others_read;
  write_file(dir / records::kSpecFile, spec_text, rw);
  const bool is_script = plan.script_name == records::kScriptFile;  // not a manifest
  write_file(dir / plan.script_name, plan.script,
             is_script ? rw | perms::owner_exec | perms::group_exec | perms::others_exec : rw);
  write_file(dir / records::kPlanFile, plan::plan_to_json(plan).dump(2) + "\n", rw);
}

void write_plan_json(const plan::LaunchPlan& plan) {
  using fs::perms;
  write_file(fs::path(plan.run_dir) / records::kPlanFile, plan::plan_to_json(plan).dump(2) + "\n",
             perms::owner_read | perms::owner_write | perms::group_read | perms::others_read);
}

RunSpec read_run_spec(const std::string& run_dir) {
  RunSpec spec;
  spec.path = (fs::path(run_dir) / records::kSpecFile).string();
  spec.text = read_spec_file(spec.path);
  return spec;
}

namespace {

std::runtime_error read_error(const std::string& path, int error) {
  return std::runtime_error("dtrain: cannot read " + path + ": " + std::strerror(error));
}

// A run-directory file that open_input() did not open: a failure to read it, or bad input when
// it is no regular file.
[[noreturn]] void refuse(const std::string& path, const OpenedInput& in) {
  if (in.error != 0) throw read_error(path, in.error);
  throw InputFileError("dtrain: " + path + ": expected a regular file, got " + in.kind);
}

}  // namespace

void require_run_dir(const std::string& run_dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(run_dir, ec);
  if (fs::is_directory(st)) return;
  std::string got = "a file";
  if (ec == std::errc::too_many_symbolic_link_levels) {
    got = "a symbolic link loop (" + ec.message() + ")";
  } else if (st.type() == fs::file_type::not_found) {
    got = "nothing (no such path)";
  } else if (ec) {
    got = "a path that cannot be looked at (" + ec.message() + ")";
  }
  throw UsageError("dtrain: " + run_dir + ": expected a run directory, got " + got);
}

std::vector<RankFile> list_rank_files(const std::string& run_dir, std::string_view extension) {
  require_run_dir(run_dir);
  std::vector<RankFile> files;
  std::error_code ec;
  fs::directory_iterator it(run_dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto rank = records::parse_rank_file_name(it->path().filename().string(), extension);
    // Only regular files (after symlinks) are rank files: a FIFO would block its reader, a device
    // such as /dev/zero never ends, and a dangling symlink or a symlink loop names nothing.
    std::error_code type_ec;
    if (rank && it->is_regular_file(type_ec)) files.push_back({*rank, it->path().string()});
  }
  if (ec) throw UsageError("dtrain: " + run_dir + ": cannot list it: " + ec.message());
  std::sort(files.begin(), files.end(),
            [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
  return files;
}

std::vector<report::UnreadableLog> list_unreadable_rank_files(const std::string& run_dir,
                                                              std::string_view extension) {
  std::vector<report::UnreadableLog> out;
  std::error_code ec;
  fs::directory_iterator it(run_dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto rank = records::parse_rank_file_name(it->path().filename().string(), extension);
    std::error_code type_ec;
    if (!rank || it->is_regular_file(type_ec)) continue;
    // open_input() opens without blocking and hands back only regular files: the FIFO, device or
    // directory is named by its kind, a dangling link or a loop by the open's error.
    const std::string path = it->path().string();
    const OpenedInput in = open_input(path);
    if (in.fd >= 0) {
      ::close(in.fd);  // became a regular file meanwhile: read next time
      continue;
    }
    std::string why = in.kind;
    if (in.error != 0) {
      why = "cannot open it: " + std::string(std::strerror(in.error));
      std::error_code link_ec;
      if (in.error == ENOENT && it->is_symlink(link_ec)) why = "a symbolic link to nothing";
    }
    out.push_back({*rank, path, why});
  }
  std::sort(out.begin(), out.end(),
            [](const report::UnreadableLog& a, const report::UnreadableLog& b) {
              return a.rank < b.rank;
            });
  return out;
}

std::optional<records::RankStart> read_rank_start(const std::string& log_path) {
  const OpenedInput in = open_input(log_path);
  if (in.fd < 0) return std::nullopt;
  char buf[8192];
  const ssize_t n = ::pread(in.fd, buf, sizeof buf, 0);
  ::close(in.fd);
  if (n <= 0) return std::nullopt;
  std::string_view head(buf, static_cast<std::size_t>(n));
  head = head.substr(0, head.find('\n'));
  if (!records::parse_log_timestamp(head)) return std::nullopt;
  return records::parse_rank_start(head.substr(records::kLogTimestampWidth + 1));
}

std::optional<std::int64_t> read_first_line_time(const std::string& log_path) {
  const OpenedInput in = open_input(log_path);
  if (in.fd < 0) return std::nullopt;
  char buf[64];
  const ssize_t n = ::pread(in.fd, buf, sizeof buf, 0);
  ::close(in.fd);
  if (n <= 0) return std::nullopt;
  return records::parse_log_timestamp(std::string_view(buf, static_cast<std::size_t>(n)));
}

std::string read_last_line(const std::string& path) {
  const OpenedInput in = open_input(path);
  if (in.fd < 0) refuse(path, in);
  const auto size = static_cast<off_t>(in.size);
  const off_t start = std::max<off_t>(0, size - 65536);
  std::string tail(static_cast<std::size_t>(size - start), '\0');
  const ssize_t n = ::pread(in.fd, tail.data(), tail.size(), start);
  const int error = errno;
  ::close(in.fd);
  if (n < 0) throw read_error(path, error);
  tail.resize(static_cast<std::size_t>(n));
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  const auto nl = tail.rfind('\n');
  return nl == std::string::npos ? tail : tail.substr(nl + 1);
}

std::map<int, std::string> read_rank_hosts(const std::string& run_dir) {
  std::map<int, std::string> hosts;
  for (const auto& f : list_rank_files(run_dir, records::kLogExtension)) {
    if (auto start = read_rank_start(f.path)) hosts[f.rank] = start->host;
  }
  return hosts;
}

std::map<int, std::string> read_attempt_hosts(const std::string& run_dir, int attempt) {
  std::map<int, std::string> hosts;
  for (const auto& f : list_rank_files(run_dir, records::kLogExtension)) {
    for_each_line(f.path, [&](std::string_view line) {
      if (!records::parse_log_timestamp(line)) return;
      const auto start = records::parse_rank_start(line.substr(records::kLogTimestampWidth + 1));
      if (start && start->attempt == attempt) hosts[f.rank] = start->host;
    });
  }
  return hosts;
}

void for_each_line(const std::string& path, const std::function<void(std::string_view)>& each) {
  FilePool pool(1);
  report::LineCursor cursor(pool.source(path), 1 << 20);
  while (cursor.next_raw(/*at_end=*/true)) each(cursor.line());
}

std::vector<RankFile> list_metric_files(const std::string& run_dir) {
  auto files = list_rank_files(run_dir, records::kMetricsExtension);
  if (files.empty()) {
    throw UsageError("dtrain: " + run_dir + ": no " +
                     records::rank_file_pattern(records::kMetricsExtension) +
                     " metric files; expected the run directory of a job whose ranks record "
                     "metrics with libdtrain's Meter");
  }
  return files;
}

AttemptScans read_attempt_scans(const std::string& run_dir, const std::vector<RankFile>& logs,
                                std::optional<int> wanted) {
  AttemptScans out;
  out.last_recorded = read_last_attempt(run_dir);
  out.attempt = wanted.value_or(out.last_recorded);
  for (const auto& f : logs) {
    out.scans.emplace_back(f.rank, 10, wanted);
    for_each_line(f.path, [&](std::string_view line) { out.scans.back().add(line); });
    if (!wanted) out.attempt = std::max(out.attempt, out.scans.back().attempt());
  }
  std::erase_if(out.scans,
                [&](const report::RankLogScan& s) { return s.attempt() != out.attempt; });
  return out;
}

int append_lost_rank_notes(const std::string& run_dir, std::optional<int> attempt,
                           std::string_view writer) {
  const auto logs = list_rank_files(run_dir, records::kLogExtension);
  const auto notes =
      report::lost_rank_notes(read_attempt_scans(run_dir, logs, attempt).scans, writer);
  for (const auto& note : notes) {
    const auto log = std::find_if(logs.begin(), logs.end(),
                                  [&](const RankFile& f) { return f.rank == note.rank; });
    // One write with O_APPEND, as the rank's logger writes: a logger still running cannot split it.
    append_whole_line(log->path, records::format_log_time(std::chrono::system_clock::now()) + " " +
                                     records::format_lost_rank_note(note));
  }
  return static_cast<int>(notes.size());
}

report::LaunchStatus read_launch_status(const std::string& run_dir, int launcher_status) {
  try {
    const auto logs = list_rank_files(run_dir, records::kLogExtension);
    return report::launch_status_from_ranks(launcher_status,
                                            read_attempt_scans(run_dir, logs).scans);
  } catch (const std::exception&) {
    return {launcher_status, {}};  // no logs to read: the launcher's word stands
  }
}

int read_last_attempt(const std::string& run_dir) {
  return report::last_attempt(read_attempt_records(run_dir));
}

report::RunStats read_run_stats(const std::string& run_dir, double straggler_threshold,
                                const std::function<void(const records::MetricRecord&)>& also) {
  report::StatsBuilder builder;
  for (const auto& [rank, host] : read_rank_hosts(run_dir)) builder.set_host(rank, host);
  const auto arrivals = read_rank_arrivals(run_dir);
  // A program without the Meter has no metric files, but its loggers' waits name its stragglers.
  if (arrivals.size() < 2 || !list_rank_files(run_dir, records::kMetricsExtension).empty()) {
    for_each_metric_record(run_dir, [&](const records::MetricRecord& r) {
      builder.add(r);
      if (also) also(r);
    });
  }
  report::RunStats stats = builder.finish(straggler_threshold);
  const long long redone = stats.lost.redone_step_records;
  stats.lost = report::compute_lost_time(read_attempt_records(run_dir),
                                         read_checkpoint_records(run_dir), stats.first_step_start);
  stats.lost.redone_step_records = redone;
  if (auto verdict = judge_rank_arrivals(arrivals, straggler_threshold)) {
    stats.arrivals = std::move(verdict->first);
    stats.arrival_ranks = verdict->second;
  }
  return stats;
}

namespace {

// attempts.jsonl, checkpoints.jsonl and job-end.jsonl hold a line per attempt, per checkpoint
// saved, per end seen (about 200 bytes each) and are read whole: 64 MiB is some 300,000 records.
constexpr std::size_t kMaxRecordFileBytes = std::size_t{64} << 20;

// Every non-empty line of RUN_DIR/NAME parsed by `parse`; none when the file does not exist. The
// file is read as any input (common/input_file.hpp): a FIFO, a device or a file over the cap is
// refused naming it and `what` it should hold.
template <typename Record, typename Parse>
std::vector<Record> read_jsonl(const std::string& run_dir, std::string_view name,
                               const std::string& what, Parse parse) {
  std::vector<Record> out;
  const std::string path = (fs::path(run_dir) / name).string();
  const std::optional<std::string> text =
      read_input_file_if_present(path, what, kMaxRecordFileBytes);
  if (!text) return out;
  std::string_view rest = *text;
  for (long long lineno = 1; !rest.empty(); ++lineno) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty()) out.push_back(parse(line, path + ":" + std::to_string(lineno)));
  }
  return out;
}

}  // namespace

namespace {

// plan.json lists every rank (about 200 bytes each): 64 MiB holds 300,000.
constexpr std::size_t kMaxPlanBytes = std::size_t{64} << 20;

// The file's text; nothing when it is missing, not a regular file or over `max_bytes`: read as
// every input is (common/input_file.hpp), a FIFO or a device in its place is left out like a
// missing file, rather than blocking or filling memory.
std::optional<std::string> optional_file(const std::string& path, const std::string& what,
                                         std::size_t max_bytes) {
  try {
    return read_input_file_if_present(path, what, max_bytes);
  } catch (const InputFileError&) {
    return std::nullopt;
  }
}

}  // namespace

RunSummary read_run_summary(const std::string& run_dir) {
  const std::string plan_path = (fs::path(run_dir) / records::kPlanFile).string();
  const std::string spec_path = (fs::path(run_dir) / records::kSpecFile).string();
  return parse_run_summary(
      run_dir, optional_file(plan_path, "a launch plan (JSON)", kMaxPlanBytes), plan_path,
      optional_file(spec_path, "a job spec (YAML)", plan::kMaxSpecBytes), spec_path);
}

std::optional<int> read_exit_status(const std::string& run_dir) {
  // One number and a newline, as the script's `echo "$status"` writes it.
  constexpr std::size_t kMaxExitStatusBytes = 64;
  const auto text = optional_file((fs::path(run_dir) / records::kExitStatusFile).string(),
                                  "an exit status", kMaxExitStatusBytes);
  if (!text) return std::nullopt;
  std::string_view digits = *text;
  while (!digits.empty() && (digits.back() == '\n' || digits.back() == ' '))
    digits.remove_suffix(1);
  int status = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), status);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return std::nullopt;  // written halfway, or not by the script: no status to trust
  }
  return status;
}

std::vector<records::AttemptRecord> read_attempt_records(const std::string& run_dir) {
  return read_jsonl<records::AttemptRecord>(run_dir, records::kAttemptsFile,
                                            "attempt records (JSON Lines)",
                                            records::parse_attempt_record);
}

std::vector<records::CheckpointRecord> read_checkpoint_records(const std::string& run_dir) {
  return read_jsonl<records::CheckpointRecord>(run_dir, records::kCheckpointsFile,
                                               "checkpoint records (JSON Lines)",
                                               records::parse_checkpoint_record);
}

namespace {

void append_line(const std::string& run_dir, std::string_view name, const std::string& record) {
  append_whole_line((fs::path(run_dir) / name).string(), record);
}

}  // namespace

void append_attempt_record(const std::string& run_dir, const records::AttemptRecord& record) {
  append_line(run_dir, records::kAttemptsFile, records::format_attempt_record(record));
}

void append_job_end_record(const std::string& run_dir, const records::JobEndRecord& record) {
  append_line(run_dir, records::kJobEndFile, records::format_job_end_record(record));
}

std::optional<records::JobEndRecord> read_job_end_record(const std::string& run_dir) {
  auto all = read_jsonl<records::JobEndRecord>(
      run_dir, records::kJobEndFile, "job end records (JSON Lines)", records::parse_job_end_record);
  if (all.empty()) return std::nullopt;
  return all.back();  // a job resubmitted by hand into its run directory ends again
}

}  // namespace dtrain::cli
