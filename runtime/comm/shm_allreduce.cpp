#include "comm/shm_allreduce.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "comm/reduce.hpp"

namespace dtrain::runtime {
namespace {

// Spins this long (pause instructions) before each wait starts yielding the core: long enough
// for a peer on its own core to arrive, short enough not to starve a peer sharing this core.
constexpr unsigned kSpinsBeforeYield = 256;
constexpr unsigned kSpinsPerPoll = 256;
constexpr std::size_t kBlockBytes = 4096;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Calls run(share, first, end) for each stretch [first, end) of the slice's elements that lies in
// one share of `share` elements (share t: [t * share, (t + 1) * share)).
template <class Run>
void by_share(const ShmAllreduce::Slice& sl, std::size_t share, const Run& run) {
  for (std::size_t pos = sl.first; pos < sl.first + sl.count;) {
    const std::size_t owner = pos / share;
    const std::size_t end = std::min(sl.first + sl.count, (owner + 1) * share);
    run(owner, pos, end);
    pos = end;
  }
}

}  // namespace

// Each counter on its own cache line pair: the owner writes it, every other rank polls it.
struct ShmAllreduce::Control {
  alignas(128) std::atomic<std::uint64_t> posted;
  alignas(128) std::atomic<std::uint64_t> reduced;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "counters in shared memory must be lock-free to work across processes");

ShmAllreduce::ShmAllreduce(int rank, std::vector<char*> segments, std::function<void()> poll,
                           std::size_t piece_bytes)
    : rank_(rank),
      size_(static_cast<int>(segments.size())),
      piece_bytes_(piece_bytes),
      segments_(std::move(segments)),
      poll_(std::move(poll)) {
  static_assert(sizeof(Control) <= kControlBytes);
}

void ShmAllreduce::init_segment(char* segment) {
  // The counters only: the buffers are written before they are read, first by their owner (so
  // their pages are NUMA-local to it) and only as far as messages reach, so a rank's memory grows
  // with the messages it sends, not with the segment's size (256 ranks on one host map 256).
  std::memset(segment, 0, kControlBytes);
  new (segment) Control{};  // the counters' lifetime begins here, for every process mapping it
}

ShmAllreduce::Control& ShmAllreduce::control(int r) const {
  return *reinterpret_cast<Control*>(segments_[static_cast<std::size_t>(r)]);
}

char* ShmAllreduce::buffer(int r, std::uint64_t piece) const {
  return segments_[static_cast<std::size_t>(r)] + kControlBytes + (piece % 2) * piece_bytes_;
}

void ShmAllreduce::wait_all(bool reduced, std::uint64_t piece) {
  waiting_reduced_.store(reduced, std::memory_order_relaxed);
  waiting_piece_.store(piece, std::memory_order_release);
  for (int r = 0; r < size_; ++r) {
    const std::atomic<std::uint64_t>& counter = reduced ? control(r).reduced : control(r).posted;
    unsigned spins = 0;
    while (counter.load(std::memory_order_acquire) < piece) {
      ++spins;
      if (spins < kSpinsBeforeYield) {
        cpu_relax();
      } else {
        sched_yield();
      }
      if (spins % kSpinsPerPoll == 0 && poll_) poll_();
    }
  }
  waiting_piece_.store(0, std::memory_order_release);
}

void ShmAllreduce::allreduce(const void* in, void* out, std::size_t count, DType type,
                             ReduceOp op) {
  const AllreducePart part{in, out, count};
  allreduce(std::span<const AllreducePart>(&part, 1), type, op);
}

void ShmAllreduce::allreduce(std::span<const AllreducePart> parts, DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  const std::size_t per_piece = piece_bytes_ / elem;
  std::size_t part = 0;
  std::size_t done = 0;  // elements of parts[part] already in a piece
  while (part < parts.size()) {
    slices_.clear();
    std::size_t n = 0;
    while (part < parts.size() && n < per_piece) {
      const AllreducePart& p = parts[part];
      const std::size_t m = std::min(p.count - done, per_piece - n);
      if (m > 0) {
        slices_.push_back({static_cast<const char*>(p.in) + done * elem,
                           static_cast<char*>(p.out) + done * elem, n, m});
      }
      n += m;
      done += m;
      if (done == p.count) {
        ++part;
        done = 0;
      }
    }
    if (n > 0) piece(n, type, op);
  }
}

ShmAllreduce::Range ShmAllreduce::share_of(std::size_t n, std::size_t elem, int rank, int size) {
  const std::size_t align = std::max<std::size_t>(1, 64 / elem);
  const std::size_t p = static_cast<std::size_t>(size);
  const std::size_t share = ((n + p - 1) / p + align - 1) / align * align;
  const std::size_t first = std::min(n, static_cast<std::size_t>(rank) * share);
  return {first, std::min(n, first + share) - first};
}

void ShmAllreduce::reduce_scatter_piece(const void* in, void* out, std::size_t n, DType type,
                                        ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  const Slice whole{static_cast<const char*>(in), nullptr, 0, n};
  const Range own = share_of(n, elem, rank_, size_);
  reduce_scatter_piece(std::span<const Slice>(&whole, 1), n, share_of(n, elem, 0, size_).count,
                       static_cast<char*>(out) + own.first * elem, type, op);
}

void ShmAllreduce::reduce_scatter_piece(std::span<const Slice> slices, std::size_t n,
                                        std::size_t share, void* share_out, DType type,
                                        ReduceOp op) {
  if (n == 0) return;
  slices_.assign(slices.begin(), slices.end());
  piece(n, type, op, std::max<std::size_t>(1, share), static_cast<char*>(share_out));
}

void ShmAllreduce::gather_piece(void* data, std::size_t n, DType type, int shift) {
  const Slice whole{nullptr, static_cast<char*>(data), 0, n};
  gather_piece(std::span<const Slice>(&whole, 1), n, share_of(n, dtype_size(type), 0, size_).count,
               type, shift);
}

void ShmAllreduce::gather_piece(std::span<const Slice> slices, std::size_t n, std::size_t share,
                                DType type, int shift) {
  if (n == 0) return;
  share = std::max<std::size_t>(1, share);
  const std::size_t elem = dtype_size(type);
  const std::uint64_t s = ++piece_;
  wait_all(false, s - 1);  // as in piece(): buffer s % 2 is free once all posted s - 1
  // This rank's share goes into its buffer, the others' come from the buffer of the rank holding
  // them.
  const std::size_t size = static_cast<std::size_t>(size_);
  const std::size_t mine =
      (static_cast<std::size_t>(rank_) + static_cast<std::size_t>(shift)) % size;
  char* own_buffer = buffer(rank_, s);
  for (const Slice& sl : slices) {
    by_share(sl, share, [&](std::size_t t, std::size_t first, std::size_t end) {
      if (t != mine) return;
      std::memcpy(own_buffer + first * elem, sl.out + (first - sl.first) * elem,
                  (end - first) * elem);
    });
  }
  control(rank_).posted.store(s, std::memory_order_release);
  wait_all(false, s);
  for (const Slice& sl : slices) {
    by_share(sl, share, [&](std::size_t t, std::size_t first, std::size_t end) {
      if (t == mine) return;
      const int holder =
          static_cast<int>((t + size - static_cast<std::size_t>(shift) % size) % size);
      std::memcpy(sl.out + (first - sl.first) * elem, buffer(holder, s) + first * elem,
                  (end - first) * elem);
    });
  }
}

void ShmAllreduce::piece(std::size_t n, DType type, ReduceOp op, std::size_t share,
                         char* share_out) {
  const std::size_t elem = dtype_size(type);
  const std::uint64_t s = ++piece_;
  // Buffer s % 2 last held piece s - 2; every rank is done reading it once all have posted s - 1.
  wait_all(false, s - 1);
  char* mine = buffer(rank_, s);
  for (const Slice& sl : slices_) std::memcpy(mine + sl.first * elem, sl.in, sl.count * elem);
  control(rank_).posted.store(s, std::memory_order_release);
  wait_all(false, s);

  // dst = buffer 0 op buffer 1 op ... over elements [first, first + len) of the piece.
  const auto reduce_range = [&](char* dst, std::size_t first, std::size_t len) {
    const std::size_t offset = first * elem;
    if (size_ == 1) {
      std::memcpy(dst, buffer(0, s) + offset, len * elem);
      return;
    }
    reduce_to(dst, buffer(0, s) + offset, buffer(1, s) + offset, len, type, op);
    for (int r = 2; r < size_; ++r) reduce_to(dst, dst, buffer(r, s) + offset, len, type, op);
  };
  if (share_out != nullptr) {
    // Only this rank's share leaves, and nobody reads it from our buffer: reduced straight out.
    // A slower rank still reading our buffer is covered by the wait at the start of piece s + 2.
    const std::size_t first = std::min(n, static_cast<std::size_t>(rank_) * share);
    reduce_range(share_out, first, std::min(n, first + share) - first);
    control(rank_).reduced.store(s, std::memory_order_release);
    return;
  }
  if (n * elem <= kOneShotBytes) {
    for (const Slice& sl : slices_) reduce_range(sl.out, sl.first, sl.count);
    return;
  }
  // Two-shot. Shares start on 64-byte boundaries so no two ranks write the same cache line.
  const Range own = share_of(n, elem, rank_, size_);
  const std::size_t first = own.first;
  const std::size_t length = own.count;
  share = std::max<std::size_t>(1, share_of(n, elem, 0, size_).count);
  if (rank_ < 2) {
    reduce_range(mine + first * elem, first, length);
  } else {
    // This rank's own buffer is an operand too: the partial result would overwrite it before its
    // turn, so each block is combined in a small buffer first.
    alignas(64) char block[kBlockBytes];
    const std::size_t per_block = kBlockBytes / elem;
    for (std::size_t d = 0; d < length; d += per_block) {
      const std::size_t m = std::min(per_block, length - d);
      reduce_range(block, first + d, m);
      std::memcpy(mine + (first + d) * elem, block, m * elem);
    }
  }
  control(rank_).reduced.store(s, std::memory_order_release);
  wait_all(true, s);
  // Each slice's elements from the ranks that reduced them (rank r holds [r * share, ...)).
  for (const Slice& sl : slices_) {
    by_share(sl, share, [&](std::size_t owner, std::size_t from, std::size_t to) {
      std::memcpy(sl.out + (from - sl.first) * elem,
                  buffer(static_cast<int>(owner), s) + from * elem, (to - from) * elem);
    });
  }
}

std::vector<int> ShmAllreduce::missing() const {
  const std::uint64_t piece = waiting_piece_.load(std::memory_order_acquire);
  std::vector<int> ranks;
  if (piece == 0) return ranks;
  const bool reduced = waiting_reduced_.load(std::memory_order_relaxed);
  for (int r = 0; r < size_; ++r) {
    const auto& counter = reduced ? control(r).reduced : control(r).posted;
    if (counter.load(std::memory_order_acquire) < piece) ranks.push_back(r);
  }
  return ranks;
}

std::string ShmAllreduce::missing_ranks() const {
  const bool reduced = waiting_reduced_.load(std::memory_order_relaxed);
  std::string text;
  for (int r : missing()) text += (text.empty() ? "" : ", ") + std::to_string(r);
  if (text.empty()) return "";
  return text + (reduced ? " (in this allreduce, but not done reducing their share)"
                         : " (not yet in this allreduce)");
}

}  // namespace dtrain::runtime
