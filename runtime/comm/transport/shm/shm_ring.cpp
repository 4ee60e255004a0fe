#include "comm/transport/shm/shm_ring.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <random>

namespace dtrain::runtime {

// The tail counts bytes given back since the start (never wraps in practice: 2^64); each
// counter and flag on its own cache line, so that one side's stores do not evict the other's line.
// The writer's position is its own (head_): the reader finds records by their marks.
struct ShmRing::Control {
  alignas(64) std::atomic<std::uint64_t> tail{0};  // bytes given back; the reader's
  alignas(64) std::atomic<std::uint32_t> reader_waiting{0};
  alignas(64) std::atomic<std::uint32_t> writer_waiting{0};
  alignas(64) std::atomic<std::uint64_t> acknowledged{0};  // the reader's
  std::int64_t writer_pid = 0;
  std::uint64_t writer_address = 0;  // where the writer maps this block
  std::atomic<std::uint32_t> remote_reads{0};
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the ring's counters are shared between processes: they must be lock-free");

namespace {

constexpr std::size_t kControlBytes = 4096;  // the data starts on its own page
constexpr std::size_t kLine = 64;
// A record's mark (its position + 1: never 0, the cleared word) and its length, then its bytes.
constexpr std::size_t kRecordHead = 16;
static_assert(ShmRing::kBytes % kLine == 0 && ShmRing::kMaxRecord % kLine == 0);

constexpr std::uint64_t line_end(std::uint64_t at) { return (at + kLine - 1) / kLine * kLine; }

// A line's first word, where a record's mark is: shared with the other process, atomic.
std::atomic_ref<std::uint64_t> word(char* line) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(line));
}

}  // namespace

ShmRing ShmRing::create() {
  ShmRing ring;
  ring.name_ = "/dtrain-p2p-" + std::to_string(::getpid()) + "-" +
               std::to_string(std::random_device{}() & 0xffffffu);
  ring.memory_ = PosixShm::create(ring.name_, kControlBytes + kBytes);
  ring.control_ = new (ring.memory_.data()) Control();
  ring.control_->writer_pid = ::getpid();
  ring.control_->writer_address = reinterpret_cast<std::uintptr_t>(ring.control_);
  ring.data_ = ring.memory_.data() + kControlBytes;
  return ring;
}

ShmRing ShmRing::open(const std::string& name) {
  ShmRing ring;
  ring.name_ = name;
  ring.memory_ = PosixShm::open(name, kControlBytes + kBytes);
  PosixShm::unlink(name);  // both ends have it mapped: nothing is left in /dev/shm
  // The writer constructed it (zero-filled memory is also its initial state).
  ring.control_ = reinterpret_cast<Control*>(ring.memory_.data());
  ring.data_ = ring.memory_.data() + kControlBytes;
  // Can this process read the writer's memory? Its pid, read through the writer's own address
  // of this block, must come back as written.
  std::int64_t pid = 0;
  const std::uint64_t at = ring.control_->writer_address + offsetof(Control, writer_pid);
  if (ring.read_writer(at, reinterpret_cast<char*>(&pid), sizeof pid) == sizeof pid &&
      pid == ring.control_->writer_pid) {
    ring.control_->remote_reads.store(1, std::memory_order_release);
  }
  return ring;
}

bool ShmRing::remote_reads() const {
  return control_->remote_reads.load(std::memory_order_acquire) != 0;
}

long ShmRing::read_writer(std::uint64_t address, char* to, std::size_t bytes) const {
  iovec local{to, bytes};
  iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), bytes};
  return static_cast<long>(
      ::process_vm_readv(static_cast<pid_t>(control_->writer_pid), &local, 1, &remote, 1, 0));
}

void ShmRing::acknowledge() { control_->acknowledged.fetch_add(1, std::memory_order_release); }

std::uint64_t ShmRing::acknowledged() const {
  return control_->acknowledged.load(std::memory_order_acquire);
}

void ShmRing::copy_in(std::uint64_t at, const char* from, std::size_t n) {
  const std::size_t offset = at % kBytes;
  const std::size_t first = std::min(n, kBytes - offset);
  std::memcpy(data_ + offset, from, first);
  // Not called for nothing: each call is a tenth of the ring's share of an 8 B message's time.
  if (n > first) std::memcpy(data_, from + first, n - first);
}

std::uint64_t ShmRing::tail_for(std::uint64_t head, std::size_t bytes) {
  if (kBytes - (head - tail_seen_) < bytes)
    tail_seen_ = control_->tail.load(std::memory_order_acquire);
  return tail_seen_;
}

void ShmRing::put_record(const char* first, std::size_t first_bytes, const char* second,
                         std::size_t second_bytes) {
  // The line of the mark never wraps (records start on lines; the ring is whole lines).
  char* line = data_ + head_ % kBytes;
  const std::uint64_t length = first_bytes + second_bytes;
  std::memcpy(line + sizeof(std::uint64_t), &length, sizeof length);
  copy_in(head_ + kRecordHead, first, first_bytes);
  if (second_bytes > 0) copy_in(head_ + kRecordHead + first_bytes, second, second_bytes);
  word(line).store(head_ + 1, std::memory_order_release);
  head_ = line_end(head_ + kRecordHead + length);
}

std::size_t ShmRing::write(const char* from, std::size_t bytes) {
  const std::uint64_t tail = tail_for(head_, line_end(kRecordHead + bytes));
  const std::size_t room = kBytes - (head_ - tail);
  if (room == 0 || bytes == 0) return 0;
  const std::size_t n = std::min({bytes, room - kRecordHead, kMaxRecord - kRecordHead});
  put_record(from, n, nullptr, 0);
  return n;
}

bool ShmRing::write_both(const char* first, std::size_t first_bytes, const char* second,
                         std::size_t second_bytes) {
  const std::uint64_t need = line_end(kRecordHead + first_bytes + second_bytes);
  const std::uint64_t tail = tail_for(head_, need);
  if (need > kBytes - (head_ - tail)) return false;
  put_record(first, first_bytes, second, second_bytes);
  return true;
}

bool ShmRing::next_record() {
  char* line = data_ + tail_ % kBytes;
  if (word(line).load(std::memory_order_acquire) != tail_ + 1) return false;
  std::memcpy(&left_, line + sizeof(std::uint64_t), sizeof left_);
  at_ = tail_ + kRecordHead;
  return true;
}

void ShmRing::give_back() {
  const std::uint64_t end = line_end(at_);
  // Not the record's first line: its mark is this lap's, never one a later lap looks for. Why
  // not clear it all the same: a store to a line the writer wrote last makes this core's next
  // fence or lock (the next call's) wait until the writer's core gives the line up, a tenth of
  // an 8 B message's time; a small message's record is that one line.
  for (std::uint64_t l = tail_ + kLine; l < end; l += kLine) {
    word(data_ + l % kBytes).store(0, std::memory_order_relaxed);
  }
  tail_ = end;
  control_->tail.store(end, std::memory_order_release);  // after the clearing: the writer's next
}

std::size_t ShmRing::read(char* to, std::size_t bytes) {
  std::size_t got = 0;
  while (got < bytes) {
    if (left_ == 0 && !next_record()) break;
    const std::size_t n = std::min<std::uint64_t>(bytes - got, left_);
    const std::size_t offset = at_ % kBytes;
    const std::size_t first = std::min(n, kBytes - offset);
    std::memcpy(to + got, data_ + offset, first);
    std::memcpy(to + got + first, data_, n - first);
    at_ += n;
    left_ -= n;
    got += n;
    if (left_ == 0) give_back();
  }
  return got;
}

const char* ShmRing::peek(std::size_t& bytes) const {
  if (left_ != 0) return nullptr;
  char* line = data_ + tail_ % kBytes;
  if (word(line).load(std::memory_order_acquire) != tail_ + 1) return nullptr;
  std::uint64_t length = 0;
  std::memcpy(&length, line + sizeof(std::uint64_t), sizeof length);
  const std::size_t at = (tail_ + kRecordHead) % kBytes;
  if (at + length > kBytes) return nullptr;
  bytes = length;
  return data_ + at;
}

void ShmRing::skip(std::size_t bytes) {
  at_ = tail_ + kRecordHead + bytes;
  left_ = 0;
  give_back();
}

bool ShmRing::empty() const {
  return left_ == 0 && word(data_ + tail_ % kBytes).load(std::memory_order_acquire) != tail_ + 1;
}

bool ShmRing::full() const {
  return head_ - control_->tail.load(std::memory_order_acquire) == kBytes;
}

namespace {

// A sleeper raises its flag, then (after a full fence) looks at the ring; the other side moves
// bytes, then looks at the flag, fenced only against the compiler (the header says why): its look
// may come before its bytes leave its core, so both may miss the other's store, and the sleeper's
// later look (kRecheckAfter) finds the bytes.
bool raise(std::atomic<std::uint32_t>& flag, bool waits) {
  const bool was_down = flag.exchange(waits ? 1 : 0, std::memory_order_seq_cst) == 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return waits && was_down;
}

bool take(std::atomic<std::uint32_t>& flag) {
  std::atomic_signal_fence(std::memory_order_seq_cst);  // after the bytes, in program order
  return flag.load(std::memory_order_relaxed) != 0 && flag.exchange(0) != 0;
}

}  // namespace

int ShmRing::recheck_sleep_ms(std::chrono::steady_clock::time_point raised_at,
                              std::chrono::steady_clock::time_point now) {
  const auto left = raised_at + kRecheckAfter - now;
  if (left <= std::chrono::steady_clock::duration::zero()) return -1;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

bool ShmRing::reader_waits(bool waits) { return raise(control_->reader_waiting, waits); }
bool ShmRing::writer_waits(bool waits) { return raise(control_->writer_waiting, waits); }
bool ShmRing::take_reader_waiting() { return take(control_->reader_waiting); }
bool ShmRing::take_writer_waiting() { return take(control_->writer_waiting); }

}  // namespace dtrain::runtime
