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
#include <string>
#include <vector>

namespace dtrain::records {

inline constexpr const char* kLiveFdVariable = "DTRAIN_LIVE_FD";

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
};

// The page's layout (both sides are the same build). Atomics of 8 bytes are lock-free and
// address-free on every platform dtrain builds for, so they work across processes.
struct LiveStatus {
  static constexpr std::uint64_t kMagic = 0x646c697665303032;  // "dlive002"
  static constexpr int kSlots = 4;  // Contexts a process may hold that the watch follows
  std::atomic<std::uint64_t> magic{0};
  LiveSlot slots[kSlots];
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

// What a reader copies out of one slot.
struct LiveSnapshot {
  std::uint64_t entered = 0;
  std::uint64_t left = 0;
  std::int64_t entered_at_us = 0;
  std::int64_t left_at_us = 0;
  std::uint64_t bytes = 0;
  std::string op;
  bool inside() const { return entered > left; }
};

class LivePage {
 public:
  // The logger's side: a fresh page (memfd), close-on-exec until hand_to_child. Null when the
  // system has no memfd or memory: the rank then runs without a live status, as before.
  static std::unique_ptr<LivePage> create() noexcept;
  // The rank's side, once per Context: the page its logger handed the process (kLiveFdVariable),
  // mapped once (the descriptor then closed and the variable removed, so that the rank's own
  // children inherit neither), and the next free slot of it; null when there is none, the
  // descriptor is not one (a variable left over from another program) or every slot is taken.
  static std::unique_ptr<LivePage> from_environment() noexcept;
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

  struct Mapping;

 private:
  LivePage(std::shared_ptr<Mapping> mapping, int slot)
      : mapping_(std::move(mapping)), slot_(slot) {}
  std::shared_ptr<Mapping> mapping_;
  int slot_;
};

}  // namespace dtrain::records
