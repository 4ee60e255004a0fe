#include "report/hang_watch.hpp"

#include <algorithm>
#include <cmath>

#include "report/field_number.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {
namespace {

std::string seconds_text(double s) {
  return std::to_string(static_cast<long long>(std::llround(std::max(0.0, s)))) + " s";
}

double seconds_between(std::int64_t from_us, std::int64_t to_us) {
  return static_cast<double>(to_us - from_us) / 1e6;
}

// The next space-separated field of `rest`, which is advanced past it.
std::string_view next_field(std::string_view& rest) {
  const std::size_t start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  const std::size_t end = rest.find(' ');
  const std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return field;
}

std::string collective_text(const std::string& op, std::uint64_t seq) {
  return (op.empty() ? std::string("collective") : op) + " #" + std::to_string(seq);
}

}  // namespace

std::optional<ProcessSample> parse_proc_stat(std::string_view text, long ticks) {
  // "PID (COMM) STATE PPID ...": COMM may hold ") ", so the last ')' ends it.
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos || ticks <= 0) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  ProcessSample s;
  const std::string_view state = next_field(rest);
  if (state.size() != 1) return std::nullopt;
  s.state = state[0];
  // Fields after the state: ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime stime (proc(5): fields 4 to 15).
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  for (int field = 4; field <= 15; ++field) {
    const std::string_view value = next_field(rest);
    if (value.empty()) return std::nullopt;
    if (field == 14 && !parse_number(value, utime)) return std::nullopt;
    if (field == 15 && !parse_number(value, stime)) return std::nullopt;
  }
  s.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(ticks);
  return s;
}

std::string describe_process(const ProcessSample& before, const ProcessSample& now,
                             double seconds) {
  const bool waits_somewhere = !now.wchan.empty() && now.wchan != "0";
  const std::string in = waits_somewhere ? " in " + now.wchan : std::string();
  const double share = seconds > 0 ? (now.cpu_seconds - before.cpu_seconds) / seconds : 0;
  const std::string cpu =
      std::to_string(static_cast<int>(std::lround(std::clamp(share, 0.0, 64.0) * 100))) + " % CPU";
  switch (now.state) {
    case 'T':
      return "stopped (SIGSTOP)";
    case 't':
      return "stopped by a debugger (ptrace)";
    case 'D':
      return "blocked in the kernel (D state)" + in;
    case 'Z':
    case 'X':
      return "exited (not yet reaped)";
    case 'R':
      return "running, " + cpu;
    case 'S':
    case 'I':
      return share >= 0.5 ? "running, " + cpu : "sleeping" + in + ", " + cpu;
    default:
      return std::string("in state ") + now.state + ", " + cpu;
  }
}

bool can_wait(const ProcessSample& process) {
  return process.state == 'R' || process.state == 'S' || process.state == 'I';
}

std::string format_wait(const RankWait& w) {
  // Space-separated, the host and op last but one and last: neither holds a space.
  return "wait rank=" + std::to_string(w.rank) + " slot=" + std::to_string(w.slot) +
         " seq=" + std::to_string(w.seq) + " bytes=" + std::to_string(w.bytes) +
         " since_us=" + std::to_string(w.since_us) + " host=" + w.host + " op=" + w.op + "\n";
}

std::optional<RankWait> parse_wait(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  std::string_view rest = line;
  if (next_field(rest) != "wait") return std::nullopt;
  RankWait w;
  int seen = 0;
  for (std::string_view f = next_field(rest); !f.empty(); f = next_field(rest)) {
    const std::size_t eq = f.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = f.substr(0, eq);
    const std::string_view value = f.substr(eq + 1);
    bool ok = true;
    if (key == "rank") {
      ok = parse_number(value, w.rank) && w.rank >= 0;
    } else if (key == "slot") {
      ok = parse_number(value, w.slot) && w.slot >= 0 && w.slot < records::LiveStatus::kSlots;
      if (ok) continue;  // optional: counted with none of the six fields below
    } else if (key == "seq") {
      ok = parse_number(value, w.seq);
    } else if (key == "bytes") {
      ok = parse_number(value, w.bytes);
    } else if (key == "since_us") {
      ok = parse_number(value, w.since_us);
    } else if (key == "host") {
      w.host = value;
    } else if (key == "op") {
      w.op = value;
    } else {
      continue;  // a field of a later version
    }
    if (!ok) return std::nullopt;
    ++seen;
  }
  if (seen < 6) return std::nullopt;
  return w;
}

std::optional<RankWait> wait_to_publish(int rank, const std::string& host,
                                        const records::LiveSnapshot& mine, std::int64_t now_us,
                                        std::chrono::seconds hang_after) {
  if (!mine.inside()) return std::nullopt;
  if (seconds_between(mine.entered_at_us, now_us) < static_cast<double>(hang_after.count())) {
    return std::nullopt;
  }
  return RankWait{rank, host, mine.entered - 1, mine.op, mine.bytes, mine.entered_at_us, 0};
}

std::optional<std::string> hang_verdict(int rank, const std::string& host,
                                        const records::LiveSnapshot& mine,
                                        const std::string& process,
                                        const std::vector<RankWait>& waits, std::int64_t now_us,
                                        std::optional<std::chrono::seconds> hang_after) {
  if (hang_after && wait_to_publish(rank, host, mine, now_us, *hang_after)) {
    return std::nullopt;  // it waits too
  }
  // The collectives this rank never entered that others wait in; the earliest is the one it holds
  // up (the later ones wait for the ranks it holds up in turn, or on it again). A rank that cannot
  // be waiting holds up the one it is inside, too (stopped in the middle of it).
  const std::uint64_t entered =
      !hang_after && mine.inside() ? mine.entered - 1 : mine.entered;  // #0 .. #entered-1
  std::optional<std::uint64_t> held;
  for (const RankWait& w : waits) {
    if (w.rank != rank && w.seq >= entered && (!held || w.seq < *held)) held = w.seq;
  }
  if (!held) return std::nullopt;
  std::vector<int> waiting;
  const RankWait* first = nullptr;
  for (const RankWait& w : waits) {
    if (w.rank == rank || w.seq != *held) continue;
    waiting.push_back(w.rank);
    if (first == nullptr || w.since_us < first->since_us) first = &w;
  }
  std::string where;
  if (mine.inside()) {
    where = "inside " + collective_text(mine.op, mine.entered - 1) + " for " +
            seconds_text(seconds_between(mine.entered_at_us, now_us));
  } else if (mine.left > 0) {
    where = "outside any collective (it left " + collective_text(mine.op, mine.left - 1) + " " +
            seconds_text(seconds_between(mine.left_at_us, now_us)) + " ago)";
  } else {
    where = "outside any collective (it has entered none yet)";
  }
  const std::size_t n = waiting.size();
  return "dtrain: hang: rank " + std::to_string(rank) + " (on " + host + ") is " + process + ", " +
         where + "; " + ranks_text(std::move(waiting)) + (n == 1 ? " waits" : " wait") + " in " +
         collective_text(first->op, first->seq) + " of " + std::to_string(first->bytes) +
         " bytes for " + seconds_text(seconds_between(first->since_us, now_us));
}

std::string waiting_where(const std::vector<RankWait>& waits, std::int64_t now_us) {
  const RankWait* first = &waits.front();
  std::uint64_t last_seq = first->seq;
  for (const RankWait& w : waits) {
    if (w.seq < first->seq || (w.seq == first->seq && w.since_us < first->since_us)) first = &w;
    last_seq = std::max(last_seq, w.seq);
  }
  return "in " + collective_text(first->op, first->seq) +
         (last_seq == first->seq ? " of " + std::to_string(first->bytes) + " bytes"
                                 : " (some already in #" + std::to_string(last_seq) + ")") +
         " for " + seconds_text(seconds_between(first->since_us, now_us));
}

std::optional<std::string> all_waiting_verdict(int size, const std::vector<RankWait>& waits,
                                               std::int64_t now_us) {
  if (waits.empty() || static_cast<int>(waits.size()) < size) return std::nullopt;
  std::vector<bool> seen(static_cast<std::size_t>(size), false);
  std::vector<std::string> hosts;
  for (const RankWait& w : waits) {
    if (w.rank < 0 || w.rank >= size) return std::nullopt;
    seen[static_cast<std::size_t>(w.rank)] = true;
    if (std::find(hosts.begin(), hosts.end(), w.host) == hosts.end()) hosts.push_back(w.host);
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) return std::nullopt;
  return "dtrain: hang: all " + std::to_string(size) + " ranks wait " +
         waiting_where(waits, now_us) + ": none is missing, so bytes are not moving" +
         (hosts.size() > 1 ? " (between " + std::to_string(hosts.size()) +
                                 " hosts: a cut or failing link, or a stuck transport)"
                           : " (a stuck transport)");
}

std::string silent_ranks_verdict(const std::vector<int>& missing,
                                 const std::vector<RankWait>& waits, std::int64_t now_us,
                                 std::chrono::seconds waited) {
  std::vector<int> waiting;
  const RankWait* first = nullptr;
  for (const RankWait& w : waits) {
    waiting.push_back(w.rank);
    if (first == nullptr || w.since_us < first->since_us) first = &w;
  }
  const std::size_t n = missing.size();
  std::string text = "dtrain: hang: " + ranks_text(missing) + " published no wait and " +
                     (n == 1 ? "its logger" : "their loggers") + " named no cause within " +
                     seconds_text(static_cast<double>(waited.count())) +
                     " (their node stopped answering, or their loggers died)";
  if (first != nullptr) {
    text += "; " + ranks_text(std::move(waiting)) + (waits.size() == 1 ? " waits" : " wait") +
            " in " + collective_text(first->op, first->seq) + " for " +
            seconds_text(seconds_between(first->since_us, now_us));
  }
  return text;
}

}  // namespace dtrain::report
