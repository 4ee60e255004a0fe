// A rank's live status: where it is in its collectives, in one page of shared memory that its
// logger (`dtrain run-rank`) makes and hands to it (DTRAIN_LIVE_FD), so that the logger's watch
// (cli/live_watch.hpp) sees at once whether its rank is inside a collective, which and since when,
// without a record on the file system and without the rank's cooperation once it stops: a rank
// stopped by SIGSTOP, spinning or blocked in the kernel leaves its last state in the page.
// Why shared memory rather than the metric records: they are buffered and written only with a
// Meter, and growing files are not what a watch polled every second should read at 1,024 ranks.
// One page per rank, made by its own logger: the only per-rank resource, and it is its own.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dtrain::records {

inline constexpr const char* kLiveFdVariable = "DTRAIN_LIVE_FD";

// How long each collective waited, for the straggler watch (docs/logs.md, "Stragglers while the job
// runs"): the rank that arrives last at a collective waits least in it, so the waits of one
// collective on every rank, matched by its sequence number, say who arrived last and how long the
// others waited for it, without clocks that agree across nodes (each wait is a duration on its own
// rank's clock). Written in windows of kArrivalWindowCalls collectives (window k: collectives #k*W
// to
// #(k+1)*W-1); the loggers copy windows out of the page and compare them (cli/live_watch.hpp).
// Why windows at levels: the loggers of different ranks read at different moments, and a program
// of microsecond collectives has moved on by thousands of windows between two reads; level m keeps
// the last window whose number is a multiple of 2^m, so a level that changes less often than the
// loggers read holds the same window on every rank. A few stores per collective, no system call.
inline constexpr std::size_t kArrivalWindowCalls = 200;
inline constexpr int kArrivalLevels = 14;  // the last level changes every 1.6 M collectives

struct ArrivalWindow {
  // The window's number + 1; 0 while it is being written (a reader that sees it change while it
  // copies drops the copy: a sequence lock).
  std::atomic<std::uint64_t> index{0};
  std::atomic<std::int64_t> first_enter_us{0};  // the window's first collective entered
  std::atomic<std::int64_t> last_leave_us{0};   // its last collective written left
  std::atomic<std::uint32_t> wait_us[kArrivalWindowCalls] = {};  // each collective's wait
};

// One Context's collectives in the page. A process may hold several Contexts (dtrain.init() and
// the torch backend's process group): each gets a slot, in the order they start, which is the
// same order on every rank, so slot k of one rank and slot k of another count the same calls.
struct LiveSlot {
  // Collectives entered and left, counted from 1 (0: none): the Context is inside collective
  // #(entered - 1) while entered > left.
  std::atomic<std::uint64_t> entered{0};
  std::atomic<std::uint64_t> left{0};
  std::atomic<std::int64_t> entered_at_us{0};  // microseconds since the epoch
  std::atomic<std::int64_t> left_at_us{0};
  std::atomic<std::uint64_t> bytes{0};
  // The operation of the last collective entered, NUL-terminated: written before `entered`, so a
  // reader that reads `entered` again after it knows the text is that collective's.
  char op[32] = {};
  ArrivalWindow current;               // the window being filled (its collectives so far)
  ArrivalWindow kept[kArrivalLevels];  // level m: the last whole window numbered k*2^m
};

// The page's layout (both sides are the same build). Atomics of 8 bytes are lock-free and
// address-free on every platform dtrain builds for, so they work across processes.
struct LiveStatus {
  static constexpr std::uint64_t kMagic = 0x646c697665303033;  // "dlive003"
  static constexpr int kSlots = 4;  // Contexts a process may hold that the watch follows
  std::atomic<std::uint64_t> magic{0};
  LiveSlot slots[kSlots];
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

// What a reader copies out of one slot.
// Now, in microseconds since the epoch by the system clock: the clock of entered_at_us, which the
// watchers (`dtrain submit`'s hang and arrival watches) compare their readings with.
std::int64_t now_us();

struct LiveSnapshot {
  std::uint64_t entered = 0;
  std::uint64_t left = 0;
  std::int64_t entered_at_us = 0;
  std::int64_t left_at_us = 0;
  std::uint64_t bytes = 0;
  std::string op;
  bool inside() const { return entered > left; }
};

// A window copied out of the page: its first `waits_us.size()` collectives (all of them for a
// whole window).
struct ArrivalCopy {
  std::uint64_t index = 0;  // the window's number
  std::int64_t first_enter_us = 0;
  std::int64_t last_leave_us = 0;
  std::vector<std::uint32_t> waits_us;
};

class LivePage {
 public:
  // The logger's side: a fresh page (memfd), close-on-exec until hand_to_child. Null when the
  // system has no memfd or memory: the rank then runs without a live status, as before.
  static std::unique_ptr<LivePage> create() noexcept;
  // The rank's side, once per Context: the page its logger handed the process (kLiveFdVariable,
  // whose value is `fd_text`: libdtrain's Settings::live_fd), mapped once (the descriptor then
  // closed and the variable removed, so that the rank's own children inherit neither), and the next
  // free slot of it; null when there is none, the descriptor is not one (a variable left over from
  // another program) or every slot is taken.
  static std::unique_ptr<LivePage> from_environment(
      const std::optional<std::string>& fd_text) noexcept;
  ~LivePage();
  LivePage(const LivePage&) = delete;
  LivePage& operator=(const LivePage&) = delete;

  // In the forked child that becomes the rank, before exec: the descriptor stays open across exec
  // and kLiveFdVariable names it.
  void hand_to_child() const noexcept;

  // The rank's side, on its slot: cheap (a few stores), never throws.
  void enter(std::uint64_t seq, const char* op, std::size_t bytes) noexcept;
  void leave(std::uint64_t seq) noexcept;
  // The logger's side: every slot, in order.
  std::vector<LiveSnapshot> read() const;
  // The logger's side: slot `slot`'s windows (arrival windows above), the one being filled
  // first (when it holds a collective), then each level's from 0 up, each window once; a window
  // that changed while it was copied is left out.
  std::vector<ArrivalCopy> read_arrivals(int slot) const;

  struct Mapping;

 private:
  LivePage(std::shared_ptr<Mapping> mapping, int slot)
      : mapping_(std::move(mapping)), slot_(slot) {}
  std::shared_ptr<Mapping> mapping_;
  int slot_;
};

}  // namespace dtrain::records
