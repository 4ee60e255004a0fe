#include "records/live_status.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  std::unique_ptr<LivePage> page(new (std::nothrow) LivePage(fd, s));
  if (!page) {
    ::munmap(s, kPageBytes);
    ::close(fd);
  }
  return page;
}

std::unique_ptr<LivePage> LivePage::from_environment() noexcept {
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
  // The mapping is all the rank needs; its own children (a data loader's workers, a shell) must
  // neither inherit the descriptor nor find the variable.
  ::close(static_cast<int>(fd));
  ::unsetenv(kLiveFdVariable);
  std::unique_ptr<LivePage> page(new (std::nothrow) LivePage(-1, s));
  if (!page) ::munmap(s, kPageBytes);
  return page;
}

LivePage::~LivePage() {
  ::munmap(status_, kPageBytes);
  if (fd_ >= 0) ::close(fd_);
}

void LivePage::hand_to_child() const noexcept {
  if (fd_ < 0 || ::fcntl(fd_, F_SETFD, 0) != 0) return;
  char text[16];
  std::snprintf(text, sizeof text, "%d", fd_);
  ::setenv(kLiveFdVariable, text, 1);
}

void LivePage::enter(std::uint64_t seq, const char* op, std::size_t bytes) noexcept {
  std::strncpy(status_->op, op, sizeof status_->op - 1);
  status_->bytes.store(bytes, std::memory_order_relaxed);
  status_->entered_at_us.store(now_us(), std::memory_order_relaxed);
  status_->entered.store(seq + 1, std::memory_order_release);
}

void LivePage::leave(std::uint64_t seq) noexcept {
  status_->left_at_us.store(now_us(), std::memory_order_relaxed);
  status_->left.store(seq + 1, std::memory_order_release);
}

LiveSnapshot LivePage::read() const {
  LiveSnapshot s;
  for (int tries = 0; tries < 3; ++tries) {
    s.entered = status_->entered.load(std::memory_order_acquire);
    s.left = status_->left.load(std::memory_order_acquire);
    s.entered_at_us = status_->entered_at_us.load(std::memory_order_relaxed);
    s.left_at_us = status_->left_at_us.load(std::memory_order_relaxed);
    s.bytes = status_->bytes.load(std::memory_order_relaxed);
    char op[sizeof status_->op];
    std::memcpy(op, status_->op, sizeof op);
    op[sizeof op - 1] = '\0';
    s.op = op;
    // The rank entered another collective while this was read: read again.
    if (status_->entered.load(std::memory_order_acquire) == s.entered) break;
  }
  return s;
}

}  // namespace dtrain::records
