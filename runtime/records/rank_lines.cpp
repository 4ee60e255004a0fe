#include "records/rank_lines.hpp"

#include <charconv>

#include "common/alarm_datagram.hpp"
#include "common/number_text.hpp"
#include "records/attempt_record.hpp"

namespace dtrain::records {
namespace {

constexpr std::string_view kPrefix = "dtrain: rank ";
constexpr std::string_view kNoteWords = " ended before it heard what rank ";

// Reads a non-negative decimal at the front of `s` and drops it.
template <typename T>
bool take_number(std::string_view& s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end == s.data() || out < 0) return false;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return true;
}

bool take(std::string_view& s, std::string_view word) {
  if (s.substr(0, word.size()) != word) return false;
  s.remove_prefix(word.size());
  return true;
}

// A log that went through a Windows tool ends its lines with CRLF; the CR is not part of the line.
std::string_view without_cr(std::string_view s) {
  if (s.ends_with('\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string signal_name(int signal) {
  static constexpr const char* kNames[] = {
      nullptr,     "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
      "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
      "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
      "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS"};
  if (signal > 0 && signal < static_cast<int>(std::size(kNames))) return kNames[signal];
  return "signal " + std::to_string(signal);
}

std::string join_command(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

int attempt_from_text(std::string_view text) {
  return static_cast<int>(dtrain::parse_whole_number(text, 0, kMaxAttempt).value_or(0));
}

std::string format_rank_start(const RankStart& s) {
  return std::string(kPrefix) + std::to_string(s.rank) + " of " + std::to_string(s.world_size) +
         " started on " + s.host + " (local rank " + std::to_string(s.local_rank) + " of " +
         std::to_string(s.local_size) + ", pid " + std::to_string(s.pid) +
         (s.attempt > 0 ? ", attempt " + std::to_string(s.attempt) : std::string()) +
         "): " + s.command;
}

std::string describe_exit(const RankExit& e) {
  if (e.signal != 0) {
    return "was killed by signal " + std::to_string(e.signal) + " (" + signal_name(e.signal) + ")";
  }
  return "exited with status " + std::to_string(e.status);
}

std::string format_rank_exit(const RankExit& e) {
  return std::string(kPrefix) + std::to_string(e.rank) + " " + describe_exit(e);
}

std::optional<RankStart> parse_rank_start(std::string_view s) {
  s = without_cr(s);
  RankStart out;
  if (!take(s, kPrefix) || !take_number(s, out.rank) || !take(s, " of ") ||
      !take_number(s, out.world_size) || !take(s, " started on ")) {
    return std::nullopt;
  }
  const auto space = s.find(' ');
  if (space == 0 || space == std::string_view::npos) return std::nullopt;
  out.host = std::string(s.substr(0, space));
  s.remove_prefix(space);
  if (!take(s, " (local rank ") || !take_number(s, out.local_rank) || !take(s, " of ") ||
      !take_number(s, out.local_size) || !take(s, ", pid ") || !take_number(s, out.pid)) {
    return std::nullopt;
  }
  if (take(s, ", attempt ") && !take_number(s, out.attempt)) return std::nullopt;
  if (!take(s, "):")) return std::nullopt;
  if (!s.empty() && s[0] == ' ') s.remove_prefix(1);
  out.command = std::string(s);
  return out;
}

std::optional<RankExit> parse_rank_exit(std::string_view s) {
  s = without_cr(s);
  RankExit out;
  if (!take(s, kPrefix) || !take_number(s, out.rank)) return std::nullopt;
  if (take(s, " exited with status ")) {
    if (!take_number(s, out.status) || !s.empty()) return std::nullopt;
    return out;
  }
  if (take(s, " was killed by signal ")) {
    if (!take_number(s, out.signal) || out.signal == 0 || !take(s, " (")) return std::nullopt;
    return out;
  }
  return std::nullopt;
}

std::string format_lost_rank_note(const LostRankNote& note) {
  return std::string(kPrefix) + std::to_string(note.rank) + std::string(kNoteWords) +
         std::to_string(note.reporter) +
         " reported: " + lost_peer_text(note.lost, note.lost_host, note.told_by) +
         "; written after the launch ended, by " + note.writer;
}

bool is_lost_rank_note(std::string_view s) {
  s = without_cr(s);
  int rank = 0;
  return take(s, kPrefix) && take_number(s, rank) && take(s, kNoteWords) &&
         s.find(kLostPeerWords) != std::string_view::npos;
}

}  // namespace dtrain::records
