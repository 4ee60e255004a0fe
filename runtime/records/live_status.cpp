#include "records/live_status.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>

namespace dtrain::records {
namespace {

// Whole pages: the status with its arrival windows (about 50 KiB).
constexpr std::size_t kPageBytes = (sizeof(LiveStatus) + 4095) / 4096 * 4096;

LiveStatus* map(int fd) noexcept {
  void* p = ::mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<LiveStatus*>(p);
}

}  // namespace

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The page's mapping (and, on the logger's side, its descriptor): shared by the LivePages of one
// process, unmapped with the last.
struct LivePage::Mapping {
  Mapping(int descriptor, LiveStatus* page) : fd(descriptor), status(page) {}
  ~Mapping() {
    ::munmap(status, kPageBytes);
    if (fd >= 0) ::close(fd);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  int fd;
  LiveStatus* status;
};

std::unique_ptr<LivePage> LivePage::create() noexcept {
  const int fd = ::memfd_create("dtrain-live", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (::ftruncate(fd, kPageBytes) != 0) {
    ::close(fd);
    return nullptr;
  }
  LiveStatus* s = map(fd);
  if (s == nullptr) {
    ::close(fd);
    return nullptr;
  }
  new (s) LiveStatus();  // a fresh memfd is zeros; this states the layout
  s->magic.store(LiveStatus::kMagic, std::memory_order_release);
  try {
    return std::unique_ptr<LivePage>(new LivePage(std::make_shared<Mapping>(fd, s), 0));
  } catch (...) {
    ::munmap(s, kPageBytes);
    ::close(fd);
    return nullptr;
  }
}

std::unique_ptr<LivePage> LivePage::from_environment(
    const std::optional<std::string>& fd_text) noexcept {
  // One mapping per process, its slots given out in the order the Contexts start.
  static std::mutex mutex;
  static std::weak_ptr<Mapping> mapped;
  static int next_slot = 0;
  std::lock_guard lock(mutex);
  std::shared_ptr<Mapping> mapping = mapped.lock();
  if (!mapping) {
    if (next_slot > 0) return nullptr;  // the process had the page and gave it up
    if (!fd_text || fd_text->empty()) return nullptr;
    const char* text = fd_text->c_str();
    char* end = nullptr;
    const long fd = std::strtol(text, &end, 10);
    if (*end != '\0' || fd < 0 || fd > 1 << 20) return nullptr;
    struct stat st {};
    // Only a page its logger made: a regular (memfd) file of exactly its size.
    if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size != static_cast<off_t>(kPageBytes)) {
      return nullptr;
    }
    LiveStatus* s = map(static_cast<int>(fd));
    if (s == nullptr) return nullptr;
    if (s->magic.load(std::memory_order_acquire) != LiveStatus::kMagic) {
      ::munmap(s, kPageBytes);
      return nullptr;
    }
    // The mapping is all the rank needs; its own children (a data loader's workers, a shell)
    // must neither inherit the descriptor nor find the variable.
    ::close(static_cast<int>(fd));
    ::unsetenv(kLiveFdVariable);
    try {
      mapping = std::make_shared<Mapping>(-1, s);
    } catch (...) {
      ::munmap(s, kPageBytes);
      return nullptr;
    }
    mapped = mapping;
  }
  if (next_slot >= LiveStatus::kSlots) return nullptr;
  try {
    return std::unique_ptr<LivePage>(new LivePage(std::move(mapping), next_slot++));
  } catch (...) {
    return nullptr;
  }
}

LivePage::~LivePage() = default;

void LivePage::hand_to_child() const noexcept {
  const int fd = mapping_->fd;
  if (fd < 0 || ::fcntl(fd, F_SETFD, 0) != 0) return;
  char text[16];
  std::snprintf(text, sizeof text, "%d", fd);
  ::setenv(kLiveFdVariable, text, 1);
}

void LivePage::enter(std::uint64_t seq, const char* op, std::size_t bytes) noexcept {
  LiveSlot& slot = mapping_->status->slots[slot_];
  std::strncpy(slot.op, op, sizeof slot.op - 1);
  slot.bytes.store(bytes, std::memory_order_relaxed);
  slot.entered_at_us.store(now_us(), std::memory_order_relaxed);
  slot.entered.store(seq + 1, std::memory_order_release);
}

namespace {

// Copies window `from` into `to` under `to`'s sequence lock.
void keep(const ArrivalWindow& from, ArrivalWindow& to, std::uint64_t index) noexcept {
  to.index.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  to.first_enter_us.store(from.first_enter_us.load(std::memory_order_relaxed),
                          std::memory_order_relaxed);
  to.last_leave_us.store(from.last_leave_us.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
  for (std::size_t i = 0; i < kArrivalWindowCalls; ++i) {
    to.wait_us[i].store(from.wait_us[i].load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  to.index.store(index + 1, std::memory_order_release);
}

// Copies `w` when it is window `index` + 1 throughout; its first `calls` waits.
std::optional<ArrivalCopy> copy_window(const ArrivalWindow& w, std::size_t calls) {
  ArrivalCopy c;
  const std::uint64_t before = w.index.load(std::memory_order_acquire);
  if (before == 0) return std::nullopt;
  c.index = before - 1;
  c.first_enter_us = w.first_enter_us.load(std::memory_order_relaxed);
  c.last_leave_us = w.last_leave_us.load(std::memory_order_relaxed);
  c.waits_us.resize(calls);
  for (std::size_t i = 0; i < calls; ++i) {
    c.waits_us[i] = w.wait_us[i].load(std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  if (w.index.load(std::memory_order_relaxed) != before) return std::nullopt;
  return c;
}

}  // namespace

void LivePage::leave(std::uint64_t seq) noexcept {
  LiveSlot& slot = mapping_->status->slots[slot_];
  const std::int64_t now = now_us();
  // The collective's wait into the window being filled; a whole window is kept at its levels.
  const std::uint64_t index = seq / kArrivalWindowCalls;
  const std::size_t at = seq % kArrivalWindowCalls;
  ArrivalWindow& w = slot.current;
  if (at == 0) {
    w.index.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    w.first_enter_us.store(slot.entered_at_us.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
  }
  const std::int64_t waited = now - slot.entered_at_us.load(std::memory_order_relaxed);
  w.wait_us[at].store(static_cast<std::uint32_t>(std::clamp<std::int64_t>(waited, 0, UINT32_MAX)),
                      std::memory_order_relaxed);
  w.last_leave_us.store(now, std::memory_order_relaxed);
  if (at == 0) w.index.store(index + 1, std::memory_order_release);
  slot.left_at_us.store(now, std::memory_order_relaxed);
  slot.left.store(seq + 1, std::memory_order_release);
  if (at + 1 == kArrivalWindowCalls) {
    // Window k is kept at every level m with 2^m dividing k (window 0 at all of them): on
    // average two levels, 400 stores per 200 collectives.
    for (int m = 0; m < kArrivalLevels; ++m) {
      if (m > 0 && (index & ((std::uint64_t{1} << m) - 1)) != 0) break;
      keep(w, slot.kept[m], index);
    }
  }
}

std::vector<ArrivalCopy> LivePage::read_arrivals(int slot_number) const {
  std::vector<ArrivalCopy> out;
  if (slot_number < 0 || slot_number >= LiveStatus::kSlots) return out;
  const LiveSlot& slot = mapping_->status->slots[slot_number];
  const std::uint64_t left = slot.left.load(std::memory_order_acquire);
  if (left > 0) {
    const std::uint64_t index = (left - 1) / kArrivalWindowCalls;
    const std::size_t calls = static_cast<std::size_t>(left - index * kArrivalWindowCalls);
    if (auto c = copy_window(slot.current, calls); c && c->index == index) {
      out.push_back(std::move(*c));
    }
  }
  for (const ArrivalWindow& w : slot.kept) {
    auto c = copy_window(w, kArrivalWindowCalls);
    if (!c) continue;
    bool seen = false;
    for (const auto& o : out) seen = seen || o.index == c->index;
    if (!seen) out.push_back(std::move(*c));
  }
  return out;
}

std::vector<LiveSnapshot> LivePage::read() const {
  std::vector<LiveSnapshot> out;
  for (const LiveSlot& slot : mapping_->status->slots) {
    LiveSnapshot s;
    for (int tries = 0; tries < 3; ++tries) {
      s.entered = slot.entered.load(std::memory_order_acquire);
      s.left = slot.left.load(std::memory_order_acquire);
      s.entered_at_us = slot.entered_at_us.load(std::memory_order_relaxed);
      s.left_at_us = slot.left_at_us.load(std::memory_order_relaxed);
      s.bytes = slot.bytes.load(std::memory_order_relaxed);
      char op[sizeof slot.op];
      std::memcpy(op, slot.op, sizeof op);
      op[sizeof op - 1] = '\0';
      s.op = op;
      // The rank entered another collective while this was read: read again.
      if (slot.entered.load(std::memory_order_acquire) == s.entered) break;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace dtrain::records
