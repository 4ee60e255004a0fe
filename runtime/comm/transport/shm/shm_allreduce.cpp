#include "comm/transport/shm/shm_allreduce.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "comm/spin_wait.hpp"
#include "comm/transport/shm/vector_reduce.hpp"
#include "common/words.hpp"

namespace dtrain::runtime {
namespace {

// Spins this long (pause instructions) before each wait starts yielding the core: long enough
// for a peer on its own core to arrive, short enough not to starve a peer sharing this core.
constexpr unsigned kSpinsBeforeYield = 256;
constexpr unsigned kSpinsPerPoll = 256;
// The direct layout reduces its share in blocks of this many bytes: a block's result stays in L1
// while the next operand is combined into it and while it is copied to the output.
constexpr std::size_t kBlockBytes = std::size_t{8} << 10;

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
// `calls`: what the owner passed to the call of each piece, by the piece's parity, written before
// `posted` and read by the others once they saw it (check_same_call): a rank can be at most one
// piece ahead of the slowest reader, so two slots hold every piece still being compared.
struct ShmAllreduce::Control {
  alignas(128) std::atomic<std::uint64_t> posted;
  alignas(128) std::atomic<std::uint64_t> reduced;
  struct Call {
    std::atomic<std::uint64_t> piece;
    std::atomic<std::uint64_t> count;
    std::atomic<std::uint64_t> what;  // CallWhat::pack()
  };
  alignas(128) Call calls[2];
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "counters in shared memory must be lock-free to work across processes");

ShmAllreduce::ShmAllreduce(int rank, std::vector<char*> segments, std::function<void()> poll,
                           std::size_t piece_bytes, Layout layout)
    : rank_(rank),
      size_(static_cast<int>(segments.size())),
      layout_(layout_for(size_, layout)),
      piece_bytes_(piece_bytes),
      slot_bytes_(slot_bytes(piece_bytes, size_)),
      one_shot_(one_shot_bytes(size_)),
      segments_(std::move(segments)),
      poll_(std::move(poll)),
      block_(layout_ == Layout::kDirect ? kBlockBytes : 0) {
  static_assert(sizeof(Control) <= kControlBytes && kControlBytes <= kPageBytes);
}

void ShmAllreduce::init_segment(char* segment) {
  // The counters only: the boxes are written before they are read, and only as far as messages
  // reach, so a rank's memory grows with the messages, not with the segment's size.
  std::memset(segment, 0, kControlBytes);
  new (segment) Control{};  // the counters' lifetime begins here, for every process mapping it
}

ShmAllreduce::Control& ShmAllreduce::control(int r) const {
  return *reinterpret_cast<Control*>(segments_[static_cast<std::size_t>(r)]);
}

char* ShmAllreduce::buffer(int r, std::uint64_t piece) const {
  return segments_[static_cast<std::size_t>(r)] + kPageBytes + (piece % 2) * piece_bytes_;
}

char* ShmAllreduce::inbox(int r, std::uint64_t piece, int from) const {
  const std::size_t boxes = inbox_bytes(piece_bytes_, size_) + outbox_bytes(piece_bytes_, size_);
  return segments_[static_cast<std::size_t>(r)] + kWindowBytes + (piece % 2) * boxes +
         static_cast<std::size_t>(from) * slot_bytes_;
}

char* ShmAllreduce::outbox(int r, std::uint64_t piece) const {
  return inbox(r, piece, 0) + inbox_bytes(piece_bytes_, size_);
}

char* ShmAllreduce::one_shot_box(int r, std::uint64_t piece) const {
  return layout_ == Layout::kDirect ? buffer(r, piece) : outbox(r, piece);
}

char* ShmAllreduce::result_at(int r, std::uint64_t piece, std::size_t pos, std::size_t share_first,
                              std::size_t elem) const {
  return layout_ == Layout::kDirect ? buffer(r, piece) + pos * elem
                                    : outbox(r, piece) + (pos - share_first) * elem;
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
  std::uint64_t total = 0;
  for (const AllreducePart& p : parts) total += p.count;
  call_ = {total, {CallWhat::Kind::kAllreduce, type, op}};
  const std::size_t elem = dtype_size(type);
  const std::size_t per_piece = piece_bytes_ / elem;
  whole_one_shot_ = layout_ == Layout::kDirect && size_ <= kWholeOneShotRanks &&
                    total * elem >= kWholeOneShotBytes;
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
                                        ReduceOp op, int shares) {
  const std::size_t elem = dtype_size(type);
  if (shares == 0) shares = size_;
  const Slice whole{static_cast<const char*>(in), nullptr, 0, n};
  const Range own = share_of(n, elem, rank_, shares);
  reduce_scatter_piece(std::span<const Slice>(&whole, 1), n, share_of(n, elem, 0, shares).count,
                       static_cast<char*>(out) + own.first * elem, type, op);
}

void ShmAllreduce::reduce_scatter_piece(std::span<const Slice> slices, std::size_t n,
                                        std::size_t share, void* share_out, DType type,
                                        ReduceOp op) {
  if (n == 0) return;
  call_ = {n, {CallWhat::Kind::kReducePiece, type, op}};
  slices_.assign(slices.begin(), slices.end());
  piece(n, type, op, std::max<std::size_t>(1, share), static_cast<char*>(share_out));
}

void ShmAllreduce::gather_piece(void* data, std::size_t n, DType type, int shift, int shares) {
  const Slice whole{nullptr, static_cast<char*>(data), 0, n};
  gather_piece(std::span<const Slice>(&whole, 1), n,
               share_of(n, dtype_size(type), 0, shares == 0 ? size_ : shares).count, type, shift);
}

void ShmAllreduce::gather_piece(std::span<const Slice> slices, std::size_t n, std::size_t share,
                                DType type, int shift) {
  if (n == 0) return;
  share = std::max<std::size_t>(1, share);
  const std::size_t elem = dtype_size(type);
  check_fits(n, share, elem);
  call_ = {n, {CallWhat::Kind::kGatherPiece, type, ReduceOp::kSum}};
  const std::uint64_t s = ++piece_;
  wait_all(false, s - 1);  // as in piece(): the buffers s % 2 are free once all posted s - 1
  // This rank's share goes where it would leave a reduced share (result_at), the others' come
  // from there in the segment of the rank holding them.
  const std::size_t size = static_cast<std::size_t>(size_);
  const std::size_t mine =
      (static_cast<std::size_t>(rank_) + static_cast<std::size_t>(shift)) % size;
  for (const Slice& sl : slices) {
    by_share(sl, share, [&](std::size_t t, std::size_t first, std::size_t end) {
      if (t != mine) return;
      std::memcpy(result_at(rank_, s, first, t * share, elem), sl.out + (first - sl.first) * elem,
                  (end - first) * elem);
    });
  }
  post(s);
  wait_all(false, s);
  check_same_call(s);
  for (const Slice& sl : slices) {
    by_share(sl, share, [&](std::size_t t, std::size_t first, std::size_t end) {
      if (t == mine) return;
      const int holder =
          static_cast<int>((t + size - static_cast<std::size_t>(shift) % size) % size);
      std::memcpy(sl.out + (first - sl.first) * elem, result_at(holder, s, first, t * share, elem),
                  (end - first) * elem);
    });
  }
}

void ShmAllreduce::post(std::uint64_t s) {
  Control::Call& call = control(rank_).calls[s % 2];
  call.piece.store(s, std::memory_order_relaxed);
  call.count.store(call_.count, std::memory_order_relaxed);
  call.what.store(call_.what.pack(), std::memory_order_relaxed);
  control(rank_).posted.store(s, std::memory_order_release);  // publishes the call too
}

void ShmAllreduce::check_same_call(std::uint64_t s) {
  // Every rank posted piece s (wait_all), after writing its call; a rank that passed other sizes
  // or types has copied its own idea of the piece, and every rank sees the same calls, so all
  // throw here, together, and the counters stay in step for the next collective. The cost: three
  // loads per rank and piece, of lines the owner wrote once.
  const std::uint64_t what = call_.what.pack();
  bool same = true;
  for (int r = 0; r < size_ && same; ++r) {
    const Control::Call& c = control(r).calls[s % 2];
    same = c.count.load(std::memory_order_relaxed) == call_.count &&
           c.what.load(std::memory_order_relaxed) == what;
  }
  if (same) return;
  std::vector<CallSeen> calls;
  for (int r = 0; r < size_; ++r) {
    const Control::Call& c = control(r).calls[s % 2];
    calls.push_back({r, c.count.load(std::memory_order_relaxed),
                     CallWhat::unpack(c.what.load(std::memory_order_relaxed))});
  }
  throw Error(Error::Code::kInvalid, "dtrain: " + mismatch_text("ranks of this node", calls));
}

void ShmAllreduce::check_fits(std::size_t n, std::size_t share, std::size_t elem) const {
  if (layout_ == Layout::kDirect && n * elem > piece_bytes_) {
    throw std::logic_error("ShmAllreduce: a piece of " + std::to_string(n * elem) +
                           " bytes does not fit a buffer of " + std::to_string(piece_bytes_));
  }
  if (layout_ == Layout::kBoxes && share * elem > slot_bytes_) {
    throw std::logic_error("ShmAllreduce: a share of " + std::to_string(share * elem) +
                           " bytes does not fit a slot of " + std::to_string(slot_bytes_));
  }
}

template <typename Src>
void ShmAllreduce::reduce_ranks(char* dst, std::size_t len, DType type, ReduceOp op,
                                const Src& src) const {
  if (size_ == 1) {
    std::memcpy(dst, src(0), len * dtype_size(type));
    return;
  }
  vector_reduce(dst, src(0), src(1), len, type, op);
  for (int r = 2; r < size_; ++r) vector_reduce(dst, dst, src(r), len, type, op);
}

void ShmAllreduce::piece(std::size_t n, DType type, ReduceOp op, std::size_t share,
                         char* share_out) {
  const std::size_t elem = dtype_size(type);
  const bool one_shot = share_out == nullptr && (n * elem <= one_shot_ || whole_one_shot_);
  if (share_out == nullptr) share = share_of(n, elem, 0, size_).count;
  share = std::max<std::size_t>(1, share);
  if (!one_shot) check_fits(n, share, elem);
  const std::uint64_t s = ++piece_;
  // The buffers s % 2 last held piece s - 2; every rank is done reading them once all have posted
  // s - 1.
  wait_all(false, s - 1);
  if (one_shot) {
    one_shot_piece(s, type, op);
  } else if (layout_ == Layout::kDirect) {
    direct_piece(s, n, share, share_out, type, op);
  } else {
    boxes_piece(s, n, share, share_out, type, op);
  }
}

void ShmAllreduce::one_shot_piece(std::uint64_t s, DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  char* mine = one_shot_box(rank_, s);
  for (const Slice& sl : slices_) std::memcpy(mine + sl.first * elem, sl.in, sl.count * elem);
  post(s);
  wait_all(false, s);
  check_same_call(s);
  for (const Slice& sl : slices_) {
    reduce_ranks(sl.out, sl.count, type, op,
                 [&](int r) -> const char* { return one_shot_box(r, s) + sl.first * elem; });
  }
}

void ShmAllreduce::direct_piece(std::uint64_t s, std::size_t n, std::size_t share, char* share_out,
                                DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  const auto own = static_cast<std::size_t>(rank_);
  char* mine = buffer(rank_, s);
  // The shares the others reduce go into this rank's buffer, at their place in the piece.
  for (const Slice& sl : slices_) {
    by_share(sl, share, [&](std::size_t t, std::size_t first, std::size_t end) {
      if (t == own) return;
      std::memcpy(mine + first * elem, sl.in + (first - sl.first) * elem, (end - first) * elem);
    });
  }
  post(s);
  wait_all(false, s);
  check_same_call(s);
  // This rank's share, block by block: its own operand straight from its input, the others' from
  // their buffers, reduced into a block of this rank's private memory and copied from there,
  // still in L1, to the output and (for the others to copy) to its buffer's own share, which no
  // rank reads as an operand. Not reduced into the buffer itself: the others hold its lines (they
  // read them from there last time), and storing into them 16 bytes at a time took ~1.3x as long
  // as memcpy's wide stores (docs/benchmarks.md, shared-memory allreduce by layout).
  const std::size_t first_own = std::min(n, own * share);
  const std::size_t end_own = std::min(n, first_own + share);
  const std::size_t block = kBlockBytes / elem;
  for (const Slice& sl : slices_) {
    const std::size_t to = std::min(sl.first + sl.count, end_own);
    for (std::size_t pos = std::max(sl.first, first_own); pos < to; pos += block) {
      const std::size_t len = std::min(block, to - pos);
      reduce_ranks(block_.data(), len, type, op, [&](int r) -> const char* {
        return r == rank_ ? sl.in + (pos - sl.first) * elem : buffer(r, s) + pos * elem;
      });
      if (share_out != nullptr) {
        std::memcpy(share_out + (pos - first_own) * elem, block_.data(), len * elem);
      } else {
        std::memcpy(mine + pos * elem, block_.data(), len * elem);
        std::memcpy(sl.out + (pos - sl.first) * elem, block_.data(), len * elem);
      }
    }
  }
  control(rank_).reduced.store(s, std::memory_order_release);
  if (share_out != nullptr) return;
  wait_all(true, s);
  for (const Slice& sl : slices_) {
    by_share(sl, share, [&](std::size_t t, std::size_t first, std::size_t end) {
      if (t == own) return;
      std::memcpy(sl.out + (first - sl.first) * elem, buffer(static_cast<int>(t), s) + first * elem,
                  (end - first) * elem);
    });
  }
}

void ShmAllreduce::boxes_piece(std::uint64_t s, std::size_t n, std::size_t share, char* share_out,
                               DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  // Each stretch of this rank's input goes to the inbox of the share's owner, into this rank's
  // slot there. Shares start on 64-byte boundaries (share_of), and so do slots.
  for (const Slice& sl : slices_) {
    by_share(sl, share, [&](std::size_t t, std::size_t first, std::size_t end) {
      std::memcpy(inbox(static_cast<int>(t), s, rank_) + (first - t * share) * elem,
                  sl.in + (first - sl.first) * elem, (end - first) * elem);
    });
  }
  post(s);
  wait_all(false, s);
  check_same_call(s);
  // This rank's share, reduced from its inbox's slots. With `share_out` only it leaves, reduced
  // straight out; a slower rank still writing the next piece is covered by the wait at its start.
  const std::size_t first = std::min(n, static_cast<std::size_t>(rank_) * share);
  const std::size_t length = std::min(n, first + share) - first;
  char* result = share_out != nullptr ? share_out : outbox(rank_, s);
  reduce_ranks(result, length, type, op, [&](int r) -> const char* { return inbox(rank_, s, r); });
  control(rank_).reduced.store(s, std::memory_order_release);
  if (share_out != nullptr) return;
  wait_all(true, s);
  // Each slice's elements from the ranks that reduced them (rank t holds [t * share, ...)).
  for (const Slice& sl : slices_) {
    by_share(sl, share, [&](std::size_t t, std::size_t from, std::size_t to) {
      std::memcpy(sl.out + (from - sl.first) * elem,
                  outbox(static_cast<int>(t), s) + (from - t * share) * elem, (to - from) * elem);
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
  const std::string text = join_ranks(missing());
  if (text.empty()) return "";
  return text + (reduced ? " (in this allreduce, but not done reducing their share)"
                         : " (not yet in this allreduce)");
}

}  // namespace dtrain::runtime
