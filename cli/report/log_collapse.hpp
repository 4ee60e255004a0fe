// `dtrain logs --collapse`: the same line printed by many ranks within a short window, printed once
// with its ranks as ranges and their hosts — "[ranks 0-1023 @ 256 hosts] UserWarning: ..." — so a
// warning every rank prints is one line, not 1,024. Lines come in merged (time) order; a group
// stays open for `window` after its first line, then is written where that first line was, with
// its time. Memory is bounded by the lines of one window (and by `max_open` groups), never by the
// log. Pure: the caller passes lines and, while following, the clock.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dtrain::report {

inline constexpr std::int64_t kCollapseWindowMicros = 2'000'000;
inline constexpr std::size_t kCollapseMaxOpen = 1u << 16;

class LogCollapser {
 public:
  // Receives each output line, '\n' included, in order.
  using Emit = std::function<void(std::string_view)>;

  explicit LogCollapser(Emit emit, std::int64_t window_micros = kCollapseWindowMicros,
                        std::size_t max_open = kCollapseMaxOpen);

  // A line of `rank` on `host` as it is in the file; `time` is its timestamp (microseconds), or for
  // a line without one the time the merge sorted it at. Lines with the same text after the
  // timestamp (the whole line when it has none) within the window of the first are one group.
  void add(int rank, std::string_view host, std::int64_t time, std::string_view line);

  // Writes the groups whose window ended before `now` (--follow: the clock, so a group does not
  // wait for the next line to be written).
  void emit_before(std::int64_t now);
  void emit_all();

 private:
  struct Group {
    std::int64_t first_time = 0;
    std::string line;  // the first line
    std::string_view text;
    std::vector<int> ranks;
    std::set<std::string> hosts;
    long long lines = 0;
  };
  void emit_front();

  Emit emit_;
  std::int64_t window_;
  std::size_t max_open_;
  std::deque<Group> open_;  // by first time
  std::uint64_t front_id_ = 0;
  std::unordered_map<std::string_view, std::uint64_t> by_text_;  // text -> id (front_id_ + index)
  std::string out_;
};

// The prefix of a group's line: "[3@node01] " for one line of one rank (as without --collapse),
// else "[ranks 0-1023 @ 256 hosts] ", "[ranks 0-3 @ node01] ", with ", 8 lines" before the "]"
// when ranks printed the line more than once.
std::string collapsed_prefix(std::vector<int> ranks, const std::set<std::string>& hosts,
                             long long lines);

// The hosts of a prefix: the one host, or "256 hosts".
std::string hosts_text(const std::set<std::string>& hosts);

}  // namespace dtrain::report
