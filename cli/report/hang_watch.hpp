// The live hang watch's judgement (docs/fault-tolerance.md, "A rank that hangs is named while the
// job runs"), pure: each rank's logger (`dtrain run-rank`, cli/live_watch.hpp) follows its rank's
// live status page (records/live_status.hpp) and process; a rank that has waited inside collective
// #k for `hang_after` publishes its wait in the run directory (one short file, once per wait); the
// logger of a rank that never entered #k reads those waits and names its own rank, what it is doing
// and what the others wait in, at once:
//   dtrain: hang: rank 1 (on node2) is stopped (SIGSTOP), outside any collective (it left
//   allreduce #40 35 s ago); ranks 0,2-3 wait in allreduce #41 of 4096 bytes for 31 s
// The logger that can see the process (same node) is the one that speaks, so a stopped, spinning
// or blocked rank is told apart from a lost node (whose logger says nothing; the waiters then
// name it as not answering).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/live_status.hpp"

namespace dtrain::report {

// From /proc/PID/stat (and wchan): what the process is doing.
struct ProcessSample {
  char state = '?';        // R, S, D, T (stopped), t (traced), Z, X; '?' unknown
  double cpu_seconds = 0;  // user + system time
  std::string wchan;       // /proc/PID/wchan ("0" or empty: none)
};

// Parses /proc/PID/stat's text (the command name may hold spaces and parentheses); `ticks`:
// sysconf(_SC_CLK_TCK). nullopt when the text is not one.
std::optional<ProcessSample> parse_proc_stat(std::string_view text, long ticks);

// "stopped (SIGSTOP)", "running, 98 % CPU", "blocked in the kernel (D state) in nfs_wait",
// "sleeping in futex_wait_queue, 0 % CPU", "exited (a zombie)": `before` and `now` taken
// `seconds` apart.
std::string describe_process(const ProcessSample& before, const ProcessSample& now, double seconds);

// Whether the process can be waiting for the others (running or asleep): a process stopped,
// traced, blocked in the kernel or exited cannot, even inside a collective (SIGSTOP can catch a
// rank in the middle of one: it must not count as a waiter, or every rank would look as if
// waiting and the live one would be blamed).
bool can_wait(const ProcessSample& process);

// One rank's published wait: inside collective #seq (op, bytes) since `since_us`, of the
// process's Context number `slot` (records::LiveStatus: the same Context on every rank).
struct RankWait {
  int rank = -1;
  std::string host;
  std::uint64_t seq = 0;
  std::string op;
  std::uint64_t bytes = 0;
  std::int64_t since_us = 0;  // microseconds since the epoch
  int slot = 0;
};
// One line, and back (nullopt: not a wait line, e.g. a file half written).
std::string format_wait(const RankWait& wait);
std::optional<RankWait> parse_wait(std::string_view line);

// The wait this rank publishes, if it has been inside a collective for `hang_after` by `now_us`
// (`mine`: one slot's; the caller sets the wait's slot).
std::optional<RankWait> wait_to_publish(int rank, const std::string& host,
                                        const records::LiveSnapshot& mine, std::int64_t now_us,
                                        std::chrono::seconds hang_after);

// The verdict on this rank: set when some rank waits in a collective this rank has not entered
// (the earliest such collective's waiters are named) and this rank is not itself waiting inside
// one for `hang_after` (then it waits too: the hierarchy's leaders move to the next collective
// while their node's ranks still wait for the last one's result); nullopt otherwise. `process`:
// what describe_process said of the rank. `mine` and `waits`: one slot's (the same Context's).
// `hang_after` nullopt: the rank cannot be waiting (can_wait), wherever it is.
std::optional<std::string> hang_verdict(int rank, const std::string& host,
                                        const records::LiveSnapshot& mine,
                                        const std::string& process,
                                        const std::vector<RankWait>& waits, std::int64_t now_us,
                                        std::optional<std::chrono::seconds> hang_after);

// Where `waits` (not empty) wait and for how long: "in allreduce #12 of 1024 bytes for 40 s", or
// "in allreduce #12 (some already in #13) for 39 s" when some finished their part of it.
std::string waiting_where(const std::vector<RankWait>& waits, std::int64_t now_us);

// When every one of `size` ranks waits inside a collective (the same one, or the next for ranks
// that finished their part of it): none is missing, so bytes are not moving (a cut link, a stuck
// transport); nullopt otherwise.
std::optional<std::string> all_waiting_verdict(int size, const std::vector<RankWait>& waits,
                                               std::int64_t now_us);

// When nobody named a culprit: `missing` (the ranks that published no wait) did not answer.
std::string silent_ranks_verdict(const std::vector<int>& missing,
                                 const std::vector<RankWait>& waits, std::int64_t now_us,
                                 std::chrono::seconds waited);

}  // namespace dtrain::report
