#include "comm/transport/shm/shm_ring.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <random>

namespace dtrain::runtime {

// Head and tail count bytes since the start (never wrap in practice: 2^64), each on its own cache
// line so that the writer's stores do not evict the reader's line and back.
struct ShmRing::Control {
  alignas(64) std::atomic<std::uint64_t> head{0};  // bytes written; the writer's
  alignas(64) std::atomic<std::uint64_t> tail{0};  // bytes read; the reader's
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

void ShmRing::copy_in(std::uint64_t head, const char* from, std::size_t n) {
  const std::size_t at = head % kBytes;
  const std::size_t first = std::min(n, kBytes - at);
  std::memcpy(data_ + at, from, first);
  std::memcpy(data_, from + first, n - first);
}

std::uint64_t ShmRing::tail_for(std::uint64_t head, std::size_t bytes) {
  if (kBytes - (head - tail_seen_) < bytes)
    tail_seen_ = control_->tail.load(std::memory_order_acquire);
  return tail_seen_;
}

std::size_t ShmRing::write(const char* from, std::size_t bytes) {
  Control& c = *control_;
  const std::uint64_t head = c.head.load(std::memory_order_relaxed);
  const std::uint64_t tail = tail_for(head, bytes);
  const std::size_t n = std::min<std::uint64_t>(bytes, kBytes - (head - tail));
  if (n == 0) return 0;
  copy_in(head, from, n);
  c.head.store(head + n, std::memory_order_release);
  return n;
}

bool ShmRing::write_both(const char* first, std::size_t first_bytes, const char* second,
                         std::size_t second_bytes) {
  Control& c = *control_;
  const std::uint64_t head = c.head.load(std::memory_order_relaxed);
  const std::uint64_t tail = tail_for(head, first_bytes + second_bytes);
  if (first_bytes + second_bytes > kBytes - (head - tail)) return false;
  copy_in(head, first, first_bytes);
  if (second_bytes > 0) copy_in(head + first_bytes, second, second_bytes);
  c.head.store(head + first_bytes + second_bytes, std::memory_order_release);
  return true;
}

std::size_t ShmRing::read(char* to, std::size_t bytes) {
  Control& c = *control_;
  const std::uint64_t tail = c.tail.load(std::memory_order_relaxed);
  const std::uint64_t head = c.head.load(std::memory_order_acquire);
  const std::size_t n = std::min<std::uint64_t>(bytes, head - tail);
  if (n == 0) return 0;
  const std::size_t at = tail % kBytes;
  const std::size_t first = std::min(n, kBytes - at);
  std::memcpy(to, data_ + at, first);
  std::memcpy(to + first, data_, n - first);
  c.tail.store(tail + n, std::memory_order_release);
  return n;
}

bool ShmRing::empty() const {
  return control_->head.load(std::memory_order_acquire) ==
         control_->tail.load(std::memory_order_acquire);
}

bool ShmRing::full() const {
  return control_->head.load(std::memory_order_acquire) -
             control_->tail.load(std::memory_order_acquire) ==
         kBytes;
}

// The flag and the counters are ordered by full fences (seq_cst): a sleeper raises its flag, then
// looks at the ring; the other side moves bytes, then looks at the flag. One of the two sees the
// other's store, so no wake-up is lost (Dekker's pattern).
void ShmRing::reader_waits(bool waits) {
  control_->reader_waiting.store(waits ? 1 : 0, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void ShmRing::writer_waits(bool waits) {
  control_->writer_waiting.store(waits ? 1 : 0, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool ShmRing::take_reader_waiting() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return control_->reader_waiting.load(std::memory_order_relaxed) != 0 &&
         control_->reader_waiting.exchange(0) != 0;
}

bool ShmRing::take_writer_waiting() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return control_->writer_waiting.load(std::memory_order_relaxed) != 0 &&
         control_->writer_waiting.exchange(0) != 0;
}

}  // namespace dtrain::runtime
