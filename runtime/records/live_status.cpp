#include "records/live_status.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace dtrain::records {
namespace {

constexpr std::size_t kPageBytes = 4096;
static_assert(sizeof(LiveStatus) <= kPageBytes);

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

LiveStatus* map(int fd) noexcept {
  void* p = ::mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<LiveStatus*>(p);
}

}  // namespace

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

std::unique_ptr<LivePage> LivePage::from_environment() noexcept {
  // One mapping per process, its slots given out in the order the Contexts start.
  static std::mutex mutex;
  static std::weak_ptr<Mapping> mapped;
  static int next_slot = 0;
  std::lock_guard lock(mutex);
  std::shared_ptr<Mapping> mapping = mapped.lock();
  if (!mapping) {
    if (next_slot > 0) return nullptr;  // the process had the page and gave it up
    const char* text = std::getenv(kLiveFdVariable);
    if (text == nullptr || *text == '\0') return nullptr;
    char* end = nullptr;
    const long fd = std::strtol(text, &end, 10);
    if (*end != '\0' || fd < 0 || fd > 1 << 20) return nullptr;
    struct stat st {};
    // Only a page its logger made: a regular (memfd) file of exactly one page.
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

void LivePage::leave(std::uint64_t seq) noexcept {
  LiveSlot& slot = mapping_->status->slots[slot_];
  slot.left_at_us.store(now_us(), std::memory_order_relaxed);
  slot.left.store(seq + 1, std::memory_order_release);
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
