#include <algorithm>
#include <cstring>

#include "comm/algorithms/hierarchy.hpp"
#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {

void Hierarchy::allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  const bool on_ring = ring(Collective::kAllreduce);
  // A share of a piece is 1 / carriers of it and must fit the node's slots, which the largest
  // node cuts into `most`: on uneven nodes the pieces are smaller.
  const std::size_t piece_bytes = node_.piece_bytes() / static_cast<std::size_t>(layout_.most) *
                                  static_cast<std::size_t>(layout_.carriers) / 64 * 64;
  const std::size_t per_piece =
      piece_elems(count, elem, piece_bytes, on_ring ? ring_piece_bytes() : kMinPieceBytes);
  const std::size_t pieces = (count + per_piece - 1) / per_piece;
  relayed_ = 0;
  call_ = "allreduce";
  // The largest share of a piece (the first local rank's) is what arrives from each node; the
  // ring receives one segment of it at a time.
  const std::size_t share =
      ShmAllreduce::share_of(std::min(per_piece, count), elem, 0, layout_.carriers).count;
  if (on_ring) {
    use_scratch(1, ShmAllreduce::share_of(share, elem, 0, layout_.nodes).count * elem);
  } else {
    use_scratch(layout_.nodes, share * elem);
  }
  // The same schedule on every rank of the node, so their shared-memory steps pair up: piece k's
  // reduction follows the finish of piece k - kDepth.
  for (std::size_t k = 0; k < pieces; ++k) {
    if (on_ring) ring_round(type, op);
    if (k >= kDepth) finish(k - kDepth, type, op);
    const std::size_t first = k * per_piece;
    const std::size_t n = std::min(per_piece, count - first);
    char* piece_out = static_cast<char*>(out) + first * elem;
    node_.reduce_scatter_piece(static_cast<const char*>(in) + first * elem, piece_out, n, type, op,
                               layout_.carriers);
    // Relay, node 1: the result sent from this slot kDepth pieces ago may still be going out; the
    // slot's next done() waits for it too.
    flights_[k % kDepth] = {piece_out, n};
    post(k, elem);
    if (relay_ && layout_.node == 1) relay(k + 1, false, type, op);
  }
  for (std::size_t k = pieces > kDepth ? pieces - kDepth : 0; k < pieces; ++k) finish(k, type, op);
  for (int slot = 0; slot < kDepth; ++slot) wait_network(slot);  // the last results sent
}

std::size_t Hierarchy::piece_elems(std::size_t count, std::size_t elem, std::size_t piece_bytes,
                                   std::size_t least) {
  const std::size_t pieces = 2 * static_cast<std::size_t>(kDepth);
  const std::size_t wanted = (count * elem + pieces - 1) / pieces;
  const std::size_t bytes = std::clamp(wanted, std::min(least, piece_bytes), piece_bytes);
  return std::max<std::size_t>(1, bytes / elem);
}

std::size_t Hierarchy::ring_piece_bytes() const {
  return std::max(kMinPieceBytes, kRingSegmentBytes * static_cast<std::size_t>(layout_.carriers) *
                                      static_cast<std::size_t>(layout_.nodes));
}

void Hierarchy::post(std::size_t k, std::size_t elem) {
  const int slot = static_cast<int>(k % kDepth);
  const Flight& f = flights_[slot];
  const int l = layout_.local_rank;
  const int size = layout_.carriers;
  const ShmAllreduce::Range own = ShmAllreduce::share_of(f.n, elem, l, size);
  const auto at = [&](const ShmAllreduce::Range& r) { return f.out + r.first * elem; };
  if (ring(Collective::kAllreduce)) {
    // Segments of the share, cut as the node cuts pieces into shares (on 64-byte lines).
    std::vector<Segment>& segments = rings_[slot].segments;
    segments.clear();
    for (int j = 0; j < layout_.nodes; ++j) {
      const ShmAllreduce::Range seg = ShmAllreduce::share_of(own.count, elem, j, layout_.nodes);
      segments.push_back({at(own) + seg.first * elem, seg.count});
    }
    ring_start(slot, RingKind::kAllreduce, elem, scratch(slot, 0));
    return;
  }
  if (relay_) {
    const int other = 1 - layout_.node;
    const auto peer = [&](int local) {
      return layout_.ranks[static_cast<std::size_t>(other)][static_cast<std::size_t>(local)];
    };
    if (layout_.node == 0) {
      // Out: this share to its owner on node 1; in: the result of the share it relays back.
      const int from = receives_from(l, 1);
      const ShmAllreduce::Range theirs = ShmAllreduce::share_of(f.n, elem, from, size);
      if (own.count > 0) net_.send(slot, at(own), own.count * elem, peer(sends_to(0, l)));
      if (theirs.count > 0) net_.recv(slot, at(theirs), theirs.count * elem, peer(from));
    } else if (own.count > 0) {
      net_.recv(slot, scratch(slot, 0), own.count * elem, peer(receives_from(l, 0)));
    }
    return;
  }
  if (own.count == 0) return;
  for (int j = 0; j < layout_.nodes; ++j) {
    if (j == layout_.node) continue;
    const int peer = layout_.peers[static_cast<std::size_t>(j)];
    net_.send(slot, at(own), own.count * elem, peer);
    net_.recv(slot, scratch(slot, j), own.count * elem, peer);
  }
}

void Hierarchy::relay(std::size_t posted, bool wait, DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  const int l = layout_.local_rank;
  const int size = layout_.carriers;
  while (relayed_ < posted) {
    const int slot = static_cast<int>(relayed_ % kDepth);
    if (wait) {
      wait_network(slot);
    } else if (!net_.done(slot)) {
      return;
    }
    const Flight& f = flights_[slot];
    const ShmAllreduce::Range own = ShmAllreduce::share_of(f.n, elem, l, size);
    if (own.count > 0) {
      char* dst = f.out + own.first * elem;
      reduce_to(dst, scratch(slot, 0), dst, own.count, type, op);  // node 0's first
      net_.send(slot, dst, own.count * elem,
                layout_.ranks[0][static_cast<std::size_t>(sends_to(1, l))]);
    }
    ++relayed_;
  }
}

void Hierarchy::finish(std::size_t k, DType type, ReduceOp op) {
  const int slot = static_cast<int>(k % kDepth);
  const Flight& f = flights_[slot];
  if (relay_) {
    if (layout_.node == 1) {
      relay(k + 1, true, type, op);
      node_.gather_piece(f.out, f.n, type, 0, layout_.carriers);
    } else {
      wait_network(slot);
      // Local rank l holds the result of share l - 1.
      node_.gather_piece(f.out, f.n, type, layout_.local_size - 1, layout_.carriers);
    }
    return;
  }
  if (ring(Collective::kAllreduce)) {
    ring_finish(slot, type, op);
    node_.gather_piece(f.out, f.n, type, 0, layout_.carriers);
    return;
  }
  const std::size_t elem = dtype_size(type);
  const ShmAllreduce::Range own =
      ShmAllreduce::share_of(f.n, elem, layout_.local_rank, layout_.carriers);
  wait_network(slot);
  if (own.count > 0 && layout_.nodes > 1) {
    // The nodes' sums in node order, this node's too, whatever this rank's node is.
    char* dst = f.out + own.first * elem;
    std::memcpy(scratch(slot, layout_.node), dst, own.count * elem);
    reduce_to(dst, scratch(slot, 0), scratch(slot, 1), own.count, type, op);
    for (int j = 2; j < layout_.nodes; ++j) {
      reduce_to(dst, dst, scratch(slot, j), own.count, type, op);
    }
  }
  node_.gather_piece(f.out, f.n, type, 0, layout_.carriers);
}

}  // namespace dtrain::runtime
