// Every rank's stacks as one tree (the LLNL STAT idea): each rank's threads are paths from the
// outermost frame in; ranks that share a path share its branch, and a branch is labelled with its
// ranks, so of 1,024 ranks waiting in one allreduce the one that is elsewhere is a branch of its
// own ("rank 3"). Here: eu-stack's or gdb's text read into frames, the merge, the text
// `dtrain stacks`, `logs --hang` and the report print, and the JSON of one rank's stacks that the
// hang watch leaves in RUN_DIR/stacks/. Pure: cli/stack_capture.hpp runs the debugger.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace dtrain::report {

// One rank's stacks, or why there are none.
struct RankStacks {
  int rank = 0;
  std::string host;
  long pid = 0;
  int attempt = 0;
  std::int64_t taken_at_us = 0;  // microseconds since the epoch; 0: unknown
  // Each thread's frames, outermost first (main, then what it called): function names only, so
  // that the same code in two processes is the same path whatever the addresses.
  std::vector<std::vector<std::string>> threads;
  // Why there is no stack ("ptrace: Operation not permitted.", "not taken within 8 s", "runs on
  // node2"); empty when `threads` holds them.
  std::string problem;
};

// The threads of gdb's `thread apply all bt` output for one process, outermost frame first. A
// frame is its function's name ("dtrain::Context::allreduce", "poll"); one gdb knows no name for
// is "??", with the library it is in when gdb says ("?? from libc.so.6").
std::vector<std::vector<std::string>> parse_gdb_backtrace(std::string_view text);

// The function name of one frame line of a backtrace ("#3  0x... in name (args) at file:line");
// nullopt for a line that is no frame.
std::optional<std::string> parse_gdb_frame(std::string_view line);

// The threads of `eu-stack -m -p PID` (elfutils) for one process, outermost frame first: frames
// "#3  0x00007f5bad8bbdd2 dtrain::Comm::allreduce(...) - /path/libdtrain.so" are their names, with
// a symbol version ("@@GLIBC_2.34") left out; one without a name is "?? from" its module's file.
std::vector<std::vector<std::string>> parse_eu_stack(std::string_view text);

// What gdb said when it could not read a process: the first of its known complaints in `text`
// ("ptrace: Operation not permitted.", "ptrace: No such process."), or eu-stack's ("eu-stack:
// dwfl_linux_proc_report pid 1: Permission denied"), else `fallback`.
std::string gdb_problem(std::string_view text, std::string_view fallback);

// One gdb run that read several processes in turn prints kStackMarker and the pid before each
// (one "echo" line); the text for each pid.
inline constexpr std::string_view kStackMarker = "@@dtrain-stacks pid ";
std::map<long, std::string> split_by_marker(std::string_view text);

struct StackNode {
  std::string frame;                // "" for the root
  std::vector<int> ranks;           // ascending, each once
  std::vector<StackNode> children;  // the most ranks first, then the lowest rank first
  // Ranks with a thread whose innermost frame this is (a rank stopped or spinning in main while
  // the others went on into an allreduce).
  std::vector<int> ends_here;
};

// The tree of the ranks' threads (ranks with a problem are left out). A rank is on a branch when
// any of its threads is.
StackNode merge_stacks(const std::vector<RankStacks>& stacks);

// The tree as text: a branch starts, with its ranks as a heading ("ranks 0,2-15 (15):"), where
// the ranks differ from the frame above or the frame above has several callees; frames of one
// branch are one per line below it, indented two spaces more than the heading. Ranks whose thread
// ends in a frame that others go on from are a branch of their own, "(in FRAME itself)". Then the
// ranks without a stack, grouped by why. "" when `stacks` is empty.
std::string format_stack_tree(const std::vector<RankStacks>& stacks);

// RUN_DIR/stacks/rank-NNNNNN.json: one rank's stacks.
nlohmann::json rank_stacks_to_json(const RankStacks& stacks);
// Throws UsageError naming `what` (the file) and the field when the JSON is not what
// rank_stacks_to_json writes.
RankStacks rank_stacks_from_json(std::string_view text, std::string_view what);

// Of stacks left by several attempts of a restarted job, those of the latest one.
std::vector<RankStacks> latest_attempt(std::vector<RankStacks> stacks);

}  // namespace dtrain::report
