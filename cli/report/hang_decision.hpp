// What one rank's hang watch decides at one tick, pure (cli/live_watch.hpp gathers what it knows:
// its rank's live page and process, the waits in RUN_DIR/live, the nodes' reach records; it acts
// on the decision: the line, the stacks, the abort). docs/fault-tolerance.md, "A rank that hangs
// is named while the job runs", says the same for users.
// Two kinds of evidence, two clocks:
//  - a rank that holds the others (stopped, spinning, blocked in the kernel, a lock of its own) is
//    ambiguous with a rank that is merely slow for a while (rank 0 saving a checkpoint while the
//    others wait in a barrier): it is named only once the others have waited `hang_after`;
//  - a node cut off is not: when every rank waits inside one collective and the nodes' link probes
//    (report/node_reach.hpp) agree on one node that none of the others reaches while they reach
//    each other, no waiting longer can change the verdict, so it is given as soon as the probes
//    say so, kLinkCheckAfter into the wait plus the probe's time, not after `hang_after`: a
//    scheduler that notices the node's silence ends the job first otherwise (Slurm marks a node
//    down after SlurmdTimeout and cancels the step, 28 s after the cut on the namespace cluster,
//    before the default 30 s), and nothing then says which node it was.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "records/live_status.hpp"
#include "report/hang_watch.hpp"
#include "report/node_reach.hpp"

namespace dtrain::report {

// The watch reads its rank's live page and process every kWatchPeriod, and the waits in
// RUN_DIR/live every kReadWaitsEvery periods: a verdict within 2 s of the waits appearing.
inline constexpr std::chrono::seconds kWatchPeriod{1};
inline constexpr int kReadWaitsEvery = 2;

// How long a rank waits inside one collective before it publishes its wait, when that is shorter
// than `hang_after`: then, if every rank waits, each node probes its links (node_reach.hpp). 5 s:
// far beyond a training step's collectives (milliseconds to a second or two), so that a healthy
// job publishes nothing, but well inside a scheduler's reaction to a silent node (Slurm's
// SlurmdTimeout, 10 s on the namespace cluster, 300 s by default), so that the cut node is named
// about 5 + 2 + kProbeLimit + 2 + kCutNodeFirst = 16 s after its ranks began to wait. A job whose
// ranks all wait longer than this without a fault (one collective of many gigabytes) costs one
// small file per rank and one probe round per node, once per such wait.
inline constexpr std::chrono::seconds kLinkCheckAfter{5};

// How long after reaching hang_after a rank's wait takes to be seen everywhere: each rank
// publishes within a period (1 s) of reaching it and the others read every other period; the
// verdict waits these two periods more, so that it names every waiting rank, not the first.
inline constexpr auto kCollectGrace = 2 * kWatchPeriod;

// How long, once every rank waits, the lowest waiting rank waits for each node's link record
// before it gives up naming a node (the probes take kProbeLimit, the records are read every other
// period of 1 s).
inline constexpr auto kReachGrace = kProbeLimit + 3 * kWatchPeriod;

// How long the lowest waiting rank of the other side holds back its cut-node verdict (and the end
// of its rank), so that the cut node's loggers, which read the same records every other period,
// end their ranks first: two of their readings. Once the other side's ranks end, the waits change
// and the cut node's loggers would judge no more.
inline constexpr auto kCutNodeFirst = 2 * kReadWaitsEvery * kWatchPeriod;

// How long after its own wait reached hang_after a waiting rank lets the culprit's logger speak
// before it names the ranks that published nothing (their node may be gone): the logger reads
// within 2 s, so 20 s is ample even on a loaded file system.
inline constexpr std::chrono::seconds kSilentGrace{20};

// How long a rank waits inside a collective before it publishes its wait: the shorter of
// kLinkCheckAfter and `hang_after`.
std::chrono::seconds publish_after(std::chrono::seconds hang_after);

// Whether a logger that sees `names` wait files in RUN_DIR/live (of `size` ranks; the first seen
// at `first_seen_us`, this wait) reads what they hold now: when every rank waits (the cut-node
// check), or once the first of them can have waited `hang_after` (then a verdict may be due).
// Until then a wait of kLinkCheckAfter that some ranks do not share (the others waiting in a
// barrier while rank 0 saves) costs each logger a directory listing, not a read of every file:
// at 1,024 ranks, 1,024 listings rather than a million small reads on a shared file system.
// `saw_all_waiting` (WatchMemory::all_waits holds some): this logger saw every rank waiting in
// its wait, so it reads on after some waits went, for the cut-node check (the cut node's ranks
// may leave theirs before it decides); no more reads than while every rank waited, one per change
// of the folder.
bool read_waits_now(int names, int size, std::int64_t first_seen_us, std::int64_t now_us,
                    std::chrono::seconds hang_after, bool saw_all_waiting);

// What one logger knows at one tick.
struct WatchView {
  int rank = 0;
  std::string host;
  int size = 0;
  std::chrono::seconds hang_after{30};
  bool abort = true;                         // DTRAIN_ON_HANG=abort
  std::vector<records::LiveSnapshot> slots;  // its rank's Contexts
  std::string doing;                         // describe_process of its rank
  bool able = true;                          // can_wait of its rank's process
  std::optional<RankWait> own_wait;          // the wait its rank published, if any
  std::vector<RankWait> waits;               // every rank's, as read from RUN_DIR/live
  std::vector<NodeReach> reach;              // the nodes' link records, as read
  std::int64_t now_us = 0;
};

// The cut-node verdict of the other side's lowest rank, held back kCutNodeFirst.
struct HeldCut {
  std::string verdict;
  std::string action;
  std::string host;  // the node cut off
  std::int64_t at_us = 0;
};

// What the watch remembers between ticks for decide().
struct WatchMemory {
  std::optional<std::int64_t> all_waiting_at_us;  // when this (lowest) rank saw every rank waiting
  std::optional<HeldCut> held;
  // Every rank's wait, as last seen all together while this rank waits: the ranks of the node cut
  // off may leave their waits before this logger decides (a logger there ends its rank, and the
  // node's other ranks then fail at once on their local connections), so the cut-node check goes
  // on with these as long as every rank of the other nodes still waits.
  std::vector<RankWait> all_waits;
};

struct Decision {
  std::optional<std::string> verdict;  // the line, without the policy's words
  std::string action;                  // what DTRAIN_ON_HANG=abort ends (after "abort: ")
  bool say = true;                     // false: end this rank and leave the words to another logger
  bool keep_wait = false;  // on the node cut off: leave this rank's wait for the other side
  std::string cut_host;    // the node cut off, when the verdict names one from the other side
};

// Whether every rank's wait reads as every rank waiting (all_waiting_verdict) from this logger,
// whose own rank must wait too: the condition for probing the nodes' links.
bool every_rank_waits(const WatchView& view);
// Whether the nodes' link records are worth reading: every rank waits, or did while this rank
// has waited (WatchMemory::all_waits).
bool link_check_due(const WatchView& view, const WatchMemory& memory);

// The decision at one tick (no verdict: nothing to say yet). `hang_log_named`: whether some
// logger already wrote a verdict to RUN_DIR/hang.log (asked only when the silent ranks' verdict
// is due).
Decision decide(const WatchView& view, WatchMemory& memory,
                const std::function<bool()>& hang_log_named);

}  // namespace dtrain::report
