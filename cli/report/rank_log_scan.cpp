#include "report/rank_log_scan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/alarm_datagram.hpp"
#include "records/log_line.hpp"

namespace dtrain::report {
namespace {

// What NCCL, Gloo, MPI, PyTorch and sockets print when the other side is gone.
constexpr std::string_view kPeerLossWords[] = {
    "peer closed",    "closed by peer",  "connection reset", "connection refused",
    "broken pipe",    "watchdog",        "timed out",        "timeout",
    "remote error",   "ncclremoteerror", "lost connection",  "socket closed",
    "proc_failed",    "process failed",  "remote process",   "peer process",
    "end of file on", "unreachable",     "missing ranks"};

constexpr std::string_view kErrorWords[] = {
    "error",         "exception", "traceback", "fatal", "segmentation fault", "abort", "panic",
    "out of memory", "killed",    "assert",    "failed"};

// Case-insensitive. The line is lower-cased 64 KiB at a time (chunks overlap by a word's length,
// so no word is missed at a seam): a rank may print 100 MB in one line, and a lower-case copy of
// all of it would cost as much again.
bool contains_any(std::string_view text, const std::string_view* words, std::size_t n) {
  constexpr std::size_t kChunk = 64 * 1024;
  std::size_t longest = 1;
  for (std::size_t i = 0; i < n; ++i) longest = std::max(longest, words[i].size());
  std::string lower;
  for (std::size_t pos = 0; pos < text.size(); pos += kChunk) {
    lower.assign(text.substr(pos, kChunk + longest - 1));
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::size_t i = 0; i < n; ++i) {
      if (lower.find(words[i]) != std::string::npos) return true;
    }
  }
  return false;
}

// Python's traceback: "Traceback (most recent call last):", indented frames, then the exception
// line ("ValueError: boom"); chained ones join with one of the two lines below and a blank line.
constexpr std::string_view kTracebackHeader = "Traceback (most recent call last):";
constexpr std::string_view kTerminateHeader = "terminate called after throwing an instance of";
constexpr std::string_view kChainLines[] = {
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:"};

bool ends_traceback(std::string_view text) {
  if (text.empty() || text[0] == ' ' || text[0] == '\t' || text.starts_with(kTracebackHeader)) {
    return false;
  }
  return std::find(std::begin(kChainLines), std::end(kChainLines), text) == std::end(kChainLines);
}

}  // namespace

std::vector<int> parse_missing_ranks(std::string_view text) {
  constexpr std::string_view kMarker = "missing ranks: ";
  std::vector<int> ranks;
  const auto at = text.rfind(kMarker);
  if (at == std::string_view::npos) return ranks;
  std::string_view rest = text.substr(at + kMarker.size());
  while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) {
    int rank = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), rank);
    if (ec != std::errc()) break;
    ranks.push_back(rank);
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (!rest.starts_with(", ")) break;
    rest.remove_prefix(2);
  }
  return ranks;
}

bool reports_peer_loss(std::string_view text) {
  return contains_any(text, kPeerLossWords, std::size(kPeerLossWords));
}

bool reports_error(std::string_view text) {
  return contains_any(text, kErrorWords, std::size(kErrorWords));
}

std::string cut_line(std::string_view line, std::size_t max_bytes) {
  if (line.size() <= max_bytes) return std::string(line);
  std::size_t keep = max_bytes;
  // Never split a UTF-8 sequence: back up over continuation bytes.
  while (keep > 0 && (static_cast<unsigned char>(line[keep]) & 0xC0) == 0x80) --keep;
  return std::string(line.substr(0, keep)) + " [... " + std::to_string(line.size() - keep) +
         " more bytes cut]";
}

RankLogScan::RankLogScan(int rank, std::size_t keep_lines, std::optional<int> up_to_attempt)
    : rank_(rank),
      keep_lines_(keep_lines),
      up_to_attempt_(up_to_attempt),
      last_lines_(keep_lines) {}

void RankLogScan::add(std::string_view line) {
  if (past_attempt_) return;
  if (line.ends_with('\r')) line.remove_suffix(1);  // a log that went through Windows
  std::string_view text = line;
  const auto t = records::parse_log_timestamp(line);
  if (t) text = line.substr(records::kLogTimestampWidth + 1);
  auto start = records::parse_rank_start(text);
  if (start && up_to_attempt_ && start->attempt > *up_to_attempt_) {
    past_attempt_ = true;  // nothing from here on is of the attempts asked for
    return;
  }
  if (records::is_lost_rank_note(text)) {
    // Written after the launch ended (rank_lines.hpp), after the exit line when there is one: it
    // tells what the rank did not hear, and is no output or sign of life of the rank's.
    const TimedLine note{t.value_or(current_time_), cut_line(text, kMaxQuotedLine)};
    if (!lost_peer_) lost_peer_ = note;
    last_peer_loss_ = note;
    last_lines_.add(cut_line(line, kMaxQuotedLine));
    return;
  }
  if (t) current_time_ = *t;
  last_time_ = current_time_;
  if (start) {
    // A new attempt in the same file: what the previous one said no longer tells how this ends.
    const auto started_at = current_time_;
    *this = RankLogScan(rank_, keep_lines_, up_to_attempt_);
    start_ = std::move(start);
    current_time_ = started_at;
    last_time_ = started_at;
    return;
  }
  if (auto exit = records::parse_rank_exit(text)) {
    exit_ = exit;
    exit_time_ = current_time_;
    return;
  }
  exit_.reset();  // output after an exit line: that was not the end
  exit_time_.reset();
  // Lines are kept cut: a rank that printed 100 MB in one line must not cost that much per copy.
  last_lines_.add(cut_line(line, kMaxQuotedLine));
  if (awaiting_exception_ && !text.empty()) {
    // libdtrain announced an exception leaving through its Context: the program's handler or
    // std::terminate prints it next ("terminate called after throwing an instance of
    // 'std::runtime_error'", then "  what():  boom"), and that is the rank's error to quote.
    const std::string_view trimmed =
        text.substr(std::min(text.find_first_not_of(' '), text.size()));
    if (text.starts_with(kTerminateHeader)) {
      first_error_ = TimedLine{current_time_, cut_line(text, kMaxQuotedLine)};
    } else {
      awaiting_exception_ = false;
      if (first_error_->text.starts_with(kTerminateHeader)) {
        if (trimmed.starts_with("what():")) {
          first_error_->text =
              cut_line(first_error_->text + "; " + std::string(trimmed), kMaxQuotedLine);
        }
      } else if (!text.starts_with("dtrain: ")) {
        first_error_ = TimedLine{current_time_, cut_line(text, kMaxQuotedLine)};
        in_traceback_ = text.starts_with(kTracebackHeader);
      }
    }
  }
  if (in_traceback_) {
    // The error a traceback reports is its last line, not its header; the frames between quote
    // source code, which is no evidence of anything.
    if (!ends_traceback(text)) return;
    first_error_ = TimedLine{current_time_, cut_line(text, kMaxQuotedLine)};
    in_traceback_ = false;
  }
  if (!lost_peer_ && text.find(kLostPeerWords) != std::string_view::npos) {
    lost_peer_ = TimedLine{current_time_, cut_line(text, kMaxQuotedLine)};
  }
  if (reports_peer_loss(text)) {
    last_peer_loss_ = TimedLine{current_time_, cut_line(text, kMaxQuotedLine)};
    if (auto missing = parse_missing_ranks(text); !missing.empty()) {
      missing_ranks_ = std::move(missing);
      missing_line_ = last_peer_loss_;
    }
  }
  if (!first_error_ && reports_error(text)) {
    first_error_ = TimedLine{current_time_, cut_line(text, kMaxQuotedLine)};
    in_traceback_ = text.starts_with(kTracebackHeader);
    awaiting_exception_ = text.starts_with("dtrain: ") &&
                          text.find(records::kExceptionPropagatesWords) != std::string_view::npos;
  }
}

}  // namespace dtrain::report
