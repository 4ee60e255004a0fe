// An allreduce among ranks that share a node, through memory they all map: no messages, no
// kernel. Open MPI 4.1 moves shared-memory messages with a system call (CMA) or through its
// fifos and then reduces into a separate buffer; on the project's 2-core VM that ran a 256 MiB
// allreduce at 1.5-3.5 GB/s where this runs it at 6-7 GB/s, and a 4 KiB one in 4.5 us where this
// takes about 2 (docs/benchmarks.md). The same idea as the one-shot/two-shot shared-memory
// allreduces of oneCCL and DeepSpeed's CPU backend.
//
// A message goes piece by piece, double-buffered (piece s uses the buffers s % 2, so a rank can
// fill the next piece while a slower rank still reads the last one). Small pieces go one-shot:
// each rank copies its piece into its segment and publishes `posted = s`; once all have, every
// rank reduces the whole piece from all segments (one synchronization). Large pieces go two-shot:
// the piece is cut into one share per rank (share_of), rank t reduces share t and publishes
// `reduced = s`, and every rank copies each share's result from the rank that reduced it (1/p of
// the arithmetic per rank). Where the bytes wait depends on how many ranks share the node
// (layout_for):
//   kDirect (up to kDirectMaxRanks, the usual GPU node): a segment holds one buffer per parity,
//   laid out as the piece, and ranks read each other's buffers. Two-shot, a rank copies in only
//   the shares the others reduce, reduces its own share from its own input and the others'
//   buffers, and leaves the result at the share's place in its buffer; so it copies (p - 1) / p
//   of the payload in and out where kBoxes copies all of it. At 2 ranks, the pieces of large
//   messages all go one-shot (kWholeOneShotRanks).
//   kBoxes (many ranks): a segment holds an inbox (a slot per rank) and an outbox per parity.
//   Each rank copies share t of its input into rank t's inbox, in its own slot; rank t reduces
//   its inbox's slots into its outbox; every rank copies each share from the reducer's outbox.
//   So a rank reads other ranks' memory only for the results, one share from each: the kernel
//   maps a shared page into a process when it is touched, and at a read fault it also maps the
//   present pages around it (fault-around, 64 KiB), so the direct layout had 256 ranks on one
//   host each map 46 MiB of the others' segments. Each region of a segment sits in its own 64 KiB
//   window for the same reason, and one-shot pieces shrink as ranks grow (one_shot_bytes).
// Operands are always combined in rank order (rank 0's data first), by the one rank that reduces
// a share or by every rank alike (one-shot), so every rank gets the same bits, in either layout.
// Buffers are refilled for piece s + 2 only once every rank has posted piece s + 1, which each does
// after it finished reading piece s.
//
// Waiting spins, then yields the core (ranks may share cores), and calls `poll` every few
// hundred spins: the Engine's deadline check throws from there, so a dead or stopped peer ends in
// the DTRAIN_TIMEOUT error, and missing_ranks() names the ranks that never arrived. Pure logic
// over memory it is given: the MPI communicator maps the segments (MPI_Win_allocate_shared), the
// unit tests use threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "comm/call_check.hpp"
#include "comm/communicator.hpp"

namespace dtrain::runtime {

class ShmAllreduce {
 public:
  // Bytes of one piece buffer. Small enough that a piece stays in a core's L2 between being
  // copied in and reduced, large enough that the synchronizations cost little against the copy.
  static constexpr std::size_t kPieceBytes = std::size_t{256} << 10;
  // Pieces up to this size go one-shot: one synchronization instead of two; every rank reads
  // every rank's piece, so with many ranks less (one_shot_bytes).
  static constexpr std::size_t kOneShotBytes = std::size_t{32} << 10;
  static constexpr std::size_t one_shot_bytes(int ranks) {
    return std::min(kOneShotBytes, std::max<std::size_t>(
                                       64, kOneShotTotalBytes / static_cast<std::size_t>(ranks)));
  }

  // Where the pieces wait (the comment at the top). kAuto: layout_for(ranks), as every rank of
  // the node computes it from the same count.
  enum class Layout { kAuto, kDirect, kBoxes };
  // Up to this many ranks per node read each other's buffers directly. Measured on the 2-vCPU VM
  // (docs/benchmarks.md, shared-memory allreduce by layout): at 2 ranks the inbox/outbox layout
  // took 1.2-1.3x the time of the direct one it replaced; the direct layout maps more of the
  // others' segments (8 ranks on one host: 2.6-2.9 MiB of shared pages per rank against 1.5 with
  // the boxes; 256 ranks: 46 MiB, which is why the boxes exist).
  static constexpr int kDirectMaxRanks = 8;
  // Up to this many ranks, in the direct layout, every piece of a message of kWholeOneShotBytes
  // or more goes one-shot: each rank reads the other's whole piece, as many bytes from the other
  // core as the two-shot path reads (half the input, then half the results), with one
  // synchronization instead of two and no result written to shared memory for the other to copy.
  // Measured with two threads on the 2-vCPU VM (bench/shm_bench.cpp): 16 MiB 2.3 against 2.8 ms
  // two-shot, 64 MiB 12.0 against 15.6, 256 MiB 42-45 against 54-55; alike at 4-8 MiB; below that,
  // where the buffers stay in the caches, two-shot's half of the arithmetic wins (128 KiB: 1.3x).
  // At 3 ranks one-shot would read 2 pieces from others where two-shot reads 4/3.
  static constexpr int kWholeOneShotRanks = 2;
  static constexpr std::size_t kWholeOneShotBytes = std::size_t{8} << 20;
  static constexpr Layout layout_for(int ranks, Layout layout = Layout::kAuto) {
    if (layout != Layout::kAuto) return layout;
    return ranks <= kDirectMaxRanks ? Layout::kDirect : Layout::kBoxes;
  }

  // Bytes each segment of `ranks` ranks must hold for pieces of `piece_bytes` in `layout`:
  // kDirect, a page for the counters and two piece buffers; kBoxes, a 64 KiB window for the
  // counters, then each box in windows of its own.
  static constexpr std::size_t segment_bytes(std::size_t piece_bytes, int ranks,
                                             Layout layout = Layout::kAuto) {
    if (layout_for(ranks, layout) == Layout::kDirect) return kPageBytes + 2 * piece_bytes;
    return kWindowBytes + 2 * (inbox_bytes(piece_bytes, ranks) + outbox_bytes(piece_bytes, ranks));
  }

  // Prepares this rank's own segment (its counters at 0; the boxes are left untouched, so that
  // memory grows with the messages sent); every rank's must be prepared before any rank's first
  // allreduce.
  static void init_segment(char* segment);

  // `segments[r]`: rank r's segment as mapped in this process, segment_bytes(piece_bytes, ranks,
  // layout) long and prepared by init_segment(). `poll` is called while waiting and may throw to
  // abandon the call. `piece_bytes` (a multiple of 64): the hierarchical allreduce takes larger
  // pieces, so that its ranks, which may share cores with others, synchronize less often.
  // `layout`: every rank of the node passes the same (kAuto everywhere but in tests).
  ShmAllreduce(int rank, std::vector<char*> segments, std::function<void()> poll,
               std::size_t piece_bytes = kPieceBytes, Layout layout = Layout::kAuto);

  std::size_t piece_bytes() const { return piece_bytes_; }
  Layout layout() const { return layout_; }

  // `in == out` is in place. kAvg sums, like kSum: the Communicator divides (communicator.hpp).
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  // Many buffers as one message: pieces are filled from consecutive parts and each part's result
  // is written straight to its `out`, so fusing many small tensors needs no staging copy.
  void allreduce(std::span<const AllreducePart> parts, DType type, ReduceOp op);

  // The elements of a piece of `n` that rank `rank` of `size` reduces in the two-shot path (its
  // share): consecutive, starting on 64-byte boundaries. The hierarchical allreduce gives each
  // rank this share to carry across nodes.
  struct Range {
    std::size_t first;
    std::size_t count;
  };
  static Range share_of(std::size_t n, std::size_t elem, int rank, int size);
  // Elements [first, first + count) of a piece, read from `in` (a reduction's input) or kept at
  // `out` (a gather's data, in the caller's memory).
  struct Slice {
    const char* in;
    char* out;
    std::size_t first;
    std::size_t count;
  };
  // The halves of an allreduce, one piece at a time, for the hierarchical collectives
  // (hierarchy.hpp); every rank calls them in the same order with the same n and share.
  // reduce_scatter_piece: the piece of `n` elements is gathered from `slices` (their `in`), and
  // the node's reduction of share `rank` (elements [rank * share, (rank + 1) * share) of the
  // piece, clipped to n) is written to `share_out`, contiguous.
  // gather_piece: each rank holds share (rank + shift) % size at its slices' `out`; afterwards
  // every rank's slices hold the whole piece.
  void reduce_scatter_piece(std::span<const Slice> slices, std::size_t n, std::size_t share,
                            void* share_out, DType type, ReduceOp op);
  void gather_piece(std::span<const Slice> slices, std::size_t n, std::size_t share, DType type,
                    int shift = 0);
  // The same over one contiguous piece, cut into `shares` shares as share_of (0: one per rank;
  // fewer: the ranks from `shares` on hold none, as on the larger nodes of a job whose nodes hold
  // different numbers of ranks): reduce_scatter_piece leaves this rank's share of the node's
  // reduction of `in` in the same elements of `out` (the rest of `out` is unspecified; in == out
  // allowed); gather_piece fills the rest of `data`.
  void reduce_scatter_piece(const void* in, void* out, std::size_t n, DType type, ReduceOp op,
                            int shares = 0);
  void gather_piece(void* data, std::size_t n, DType type, int shift = 0, int shares = 0);

  // What one rank passed to a call, as the others compare it (comm/call_check.hpp).
  using CallWhat = runtime::CallWhat;
  using CallSeen = runtime::CallSeen;

  // While a call waits: the ranks it waits for, e.g. "1, 3 (not yet in this allreduce)"; "" when
  // it does not wait.
  std::string missing_ranks() const;
  // The same ranks as numbers (read afresh from their counters); empty when no call waits.
  std::vector<int> missing() const;

 private:
  static constexpr std::size_t kControlBytes = 512;
  static constexpr std::size_t kPageBytes = 4096;
  // The kernel's fault-around window (64 KiB by default): a region apart from the others by at
  // least this much is never mapped by a read of another region.
  static constexpr std::size_t kWindowBytes = std::size_t{64} << 10;
  // What one-shot reads from all ranks together, at most.
  static constexpr std::size_t kOneShotTotalBytes = std::size_t{256} << 10;
  static constexpr std::size_t round_up(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
  }
  // A rank's slot in an inbox: a share of a piece of piece_bytes (share_of rounds it up to 64
  // bytes, plus an element), kept on 64-byte lines.
  static constexpr std::size_t slot_bytes(std::size_t piece_bytes, int ranks) {
    return round_up(piece_bytes / static_cast<std::size_t>(ranks) + 128, 64);
  }
  static constexpr std::size_t inbox_bytes(std::size_t piece_bytes, int ranks) {
    return round_up(static_cast<std::size_t>(ranks) * slot_bytes(piece_bytes, ranks),
                    kWindowBytes) +
           kWindowBytes;
  }
  // A one-shot piece, or a reduced share.
  static constexpr std::size_t outbox_bytes(std::size_t piece_bytes, int ranks) {
    return round_up(std::max(one_shot_bytes(ranks), slot_bytes(piece_bytes, ranks)), kWindowBytes) +
           kWindowBytes;
  }
  struct Control;

  Control& control(int r) const;
  // kDirect: rank r's buffer for piece `piece`.
  char* buffer(int r, std::uint64_t piece) const;
  // kBoxes: rank r's boxes for piece `piece`; the inbox's slot of rank `from`.
  char* inbox(int r, std::uint64_t piece, int from) const;
  char* outbox(int r, std::uint64_t piece) const;
  // Where rank r's one-shot piece waits; where element `pos` of the share starting at
  // `share_first` lies once rank r reduced it (or holds it, in a gather): kDirect, at its place
  // in r's buffer; kBoxes, in r's outbox, the share from its start.
  char* one_shot_box(int r, std::uint64_t piece) const;
  char* result_at(int r, std::uint64_t piece, std::size_t pos, std::size_t share_first,
                  std::size_t elem) const;
  void wait_all(bool reduced, std::uint64_t piece);
  // Throws std::logic_error when a piece of `n` elements or a share of `share` would not fit the
  // buffers or slots (a caller's bug).
  void check_fits(std::size_t n, std::size_t share, std::size_t elem) const;
  // Publishes piece s and the call it belongs to (call_).
  void post(std::uint64_t s);
  // Once every rank posted piece s: throws Error kInvalid when their calls differ.
  void check_same_call(std::uint64_t s);
  // Reduces the piece described by slices_ (n elements) into the slices' `out`; with
  // `share_out`, only this rank's share (of `share` elements) into it.
  void piece(std::size_t n, DType type, ReduceOp op, std::size_t share = 0,
             char* share_out = nullptr);
  void one_shot_piece(std::uint64_t s, DType type, ReduceOp op);
  // The two-shot piece s in each layout (piece() has checked and waited for the buffers).
  void direct_piece(std::uint64_t s, std::size_t n, std::size_t share, char* share_out, DType type,
                    ReduceOp op);
  void boxes_piece(std::uint64_t s, std::size_t n, std::size_t share, char* share_out, DType type,
                   ReduceOp op);
  // dst = src(0) op src(1) op ... op src(size - 1), `len` elements, in rank order; dst is none
  // of the operands.
  template <typename Src>
  void reduce_ranks(char* dst, std::size_t len, DType type, ReduceOp op, const Src& src) const;

  int rank_;
  int size_;
  Layout layout_;  // kDirect or kBoxes
  std::size_t piece_bytes_;
  std::size_t slot_bytes_;       // slot_bytes(piece_bytes_, size_)
  std::size_t one_shot_;         // one_shot_bytes(size_)
  bool whole_one_shot_ = false;  // the current allreduce's pieces all one-shot
  std::vector<char*> segments_;
  std::function<void()> poll_;
  std::uint64_t piece_ = 0;    // pieces done; every rank counts the same
  std::vector<Slice> slices_;  // the current piece's, kept to allocate nothing per call
  std::vector<char> block_;    // kDirect: where a block of this rank's share is reduced
  struct {
    std::uint64_t count = 0;
    CallWhat what;
  } call_;  // the current call's, for post()
  // What a stuck wait waits for, for missing_ranks() (read by the thread reporting a timeout).
  std::atomic<std::uint64_t> waiting_piece_{0};
  std::atomic<bool> waiting_reduced_{false};
};

}  // namespace dtrain::runtime
