// Hierarchy::reduce_scatter and allgather (hierarchy.hpp): the blocks each local rank carries
// across nodes are laid out share by share in the node's shared memory, so that one
// reduce_scatter_piece leaves each rank exactly the node's sums it sends, and one gather_piece
// hands every rank the blocks its node's ranks received.
#include <algorithm>
#include <cstring>

#include "comm/algorithms/hierarchy.hpp"
#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {

int Hierarchy::carried_block(int local, int j, bool outgoing) const {
  const int node = layout_.node;
  const int there = j == node ? local : outgoing ? sends_to(node, local) : receives_from(local, j);
  return layout_.ranks[static_cast<std::size_t>(j)][static_cast<std::size_t>(there)];
}

void Hierarchy::lay_out_blocks(const char* in, char* out, std::size_t stride, std::size_t a,
                               std::size_t n, bool outgoing) {
  slices_.clear();
  const auto nodes = static_cast<std::size_t>(layout_.nodes);
  for (int local = 0; local < layout_.local_size; ++local) {
    for (int j = 0; j < layout_.nodes; ++j) {
      const std::size_t at = static_cast<std::size_t>(carried_block(local, j, outgoing)) * stride;
      const std::size_t share =
          static_cast<std::size_t>(local) * nodes + static_cast<std::size_t>(j);
      slices_.push_back({in == nullptr ? nullptr : in + at + a,
                         out == nullptr ? nullptr : out + at + a, share * n, n});
    }
  }
}

std::size_t Hierarchy::block_piece(std::size_t count, std::size_t elem, Collective op) const {
  // Pieces as the allreduce's for the whole message, which holds one block per rank.
  const auto ranks = static_cast<std::size_t>(layout_.nodes * layout_.local_size);
  const std::size_t least = ring(op) ? ring_piece_bytes() : kMinPieceBytes;
  return std::max<std::size_t>(
      1, piece_elems(count * ranks, elem, node_.piece_bytes(), least) / ranks);
}

void Hierarchy::reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                               ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  call_ = "reduce_scatter";
  piece_n_ = block_piece(count, elem, Collective::kReduceScatter);
  const std::size_t pieces = (count + piece_n_ - 1) / piece_n_;
  // This rank's staging holds a block's piece for every node; each node's share arrives in a
  // cell (direct, relay), or the ring's one segment at a time.
  const std::size_t staging = std::min(piece_n_, count) * static_cast<std::size_t>(layout_.nodes);
  use_scratch(ring(Collective::kReduceScatter) ? 2 : layout_.nodes, staging * elem);
  // As the allreduce's schedule: piece k's reduction follows the finish of piece k - kDepth, whose
  // staging it reuses. In place (in == out) is safe: piece k's result lands in elements of block
  // 0 that piece k has already read.
  for (std::size_t k = 0; k < pieces; ++k) {
    if (ring(Collective::kReduceScatter)) ring_round(type, op);
    if (k >= kDepth) scatter_finish(k - kDepth, type, op);
    flights_[k % kDepth] = {static_cast<char*>(out) + k * piece_n_ * elem,
                            std::min(piece_n_, count - k * piece_n_)};
    scatter_post(k, static_cast<const char*>(in), count, type, op);
  }
  for (std::size_t k = pieces > kDepth ? pieces - kDepth : 0; k < pieces; ++k) {
    scatter_finish(k, type, op);
  }
}

void Hierarchy::scatter_post(std::size_t k, const char* in, std::size_t count, DType type,
                             ReduceOp op) {
  const int slot = static_cast<int>(k % kDepth);
  const std::size_t elem = dtype_size(type);
  const std::size_t n = flights_[slot].n;
  const auto nodes = static_cast<std::size_t>(layout_.nodes);
  // This rank's share: the node's sums of the blocks it carries, by node, in its own scratch.
  const bool on_ring = ring(Collective::kReduceScatter);
  char* staging = scratch(slot, on_ring ? 0 : layout_.node);
  lay_out_blocks(in, nullptr, count * elem, k * piece_n_ * elem, n, true);
  node_.reduce_scatter_piece(slices_,
                             n * static_cast<std::size_t>(layout_.nodes * layout_.local_size),
                             n * nodes, staging, type, op);
  if (on_ring) {
    std::vector<Segment>& segments = rings_[slot].segments;
    segments.clear();
    for (std::size_t j = 0; j < nodes; ++j) segments.push_back({staging + j * n * elem, n});
    ring_start(slot, RingKind::kReduceScatter, elem, scratch(slot, 1));
    return;
  }
  const int l = layout_.local_rank;
  for (int j = 0; j < layout_.nodes; ++j) {
    if (j == layout_.node) continue;
    const auto& there = layout_.ranks[static_cast<std::size_t>(j)];
    net_.send(slot, staging + static_cast<std::size_t>(j) * n * elem, n * elem,
              there[static_cast<std::size_t>(sends_to(layout_.node, l))]);
    net_.recv(slot, scratch(slot, j), n * elem,
              there[static_cast<std::size_t>(receives_from(l, j))]);
  }
}

void Hierarchy::scatter_finish(std::size_t k, DType type, ReduceOp op) {
  const int slot = static_cast<int>(k % kDepth);
  const Flight& f = flights_[slot];
  const std::size_t elem = dtype_size(type);
  if (ring(Collective::kReduceScatter)) {
    // The ring left this node's block, reduced over every node, in its place in the staging.
    ring_finish(slot, type, op);
    std::memcpy(f.out, scratch(slot, 0) + static_cast<std::size_t>(layout_.node) * f.n * elem,
                f.n * elem);
    return;
  }
  wait_network(slot);
  // The nodes' sums of this rank's block, in node order: this node's from the staging.
  const auto sum_of = [&](int j) {
    return j == layout_.node ? scratch(slot, j) + static_cast<std::size_t>(j) * f.n * elem
                             : scratch(slot, j);
  };
  if (layout_.nodes == 1) {
    std::memcpy(f.out, sum_of(0), f.n * elem);
    return;
  }
  reduce_to(f.out, sum_of(0), sum_of(1), f.n, type, op);
  for (int j = 2; j < layout_.nodes; ++j) reduce_to(f.out, f.out, sum_of(j), f.n, type, op);
}

void Hierarchy::allgather(const void* in, void* out, std::size_t bytes) {
  call_ = "allgather";
  piece_n_ = block_piece(bytes, 1, Collective::kAllgather);
  const std::size_t pieces = (bytes + piece_n_ - 1) / piece_n_;
  char* own =
      static_cast<char*>(out) +
      static_cast<std::size_t>(layout_.node_ranks[static_cast<std::size_t>(layout_.local_rank)]) *
          bytes;
  if (in != own) std::memcpy(own, in, bytes);
  for (std::size_t k = 0; k < pieces; ++k) {
    if (ring(Collective::kAllgather)) ring_round(DType::kUInt8, ReduceOp::kSum);
    if (k >= kDepth) gather_finish(k - kDepth, bytes);
    flights_[k % kDepth] = {static_cast<char*>(out) + k * piece_n_,
                            std::min(piece_n_, bytes - k * piece_n_)};
    gather_post(k, own, bytes);
  }
  for (std::size_t k = pieces > kDepth ? pieces - kDepth : 0; k < pieces; ++k) {
    gather_finish(k, bytes);
  }
}

void Hierarchy::gather_post(std::size_t k, const char* own, std::size_t bytes) {
  const int slot = static_cast<int>(k % kDepth);
  const Flight& f = flights_[slot];
  const std::size_t a = k * piece_n_;
  const int l = layout_.local_rank;
  if (ring(Collective::kAllgather)) {
    // The blocks of this local rank on every node, this rank's own complete.
    std::vector<Segment>& segments = rings_[slot].segments;
    segments.clear();
    for (const auto& there : layout_.ranks) {
      segments.push_back(
          {f.out + static_cast<std::size_t>(there[static_cast<std::size_t>(l)]) * bytes, f.n});
    }
    ring_start(slot, RingKind::kAllgather, 1, nullptr);
    return;
  }
  for (int j = 0; j < layout_.nodes; ++j) {
    if (j == layout_.node) continue;
    const auto& there = layout_.ranks[static_cast<std::size_t>(j)];
    net_.send(slot, own + a, f.n, there[static_cast<std::size_t>(sends_to(layout_.node, l))]);
    const int from = there[static_cast<std::size_t>(receives_from(l, j))];
    net_.recv(slot, f.out + static_cast<std::size_t>(from) * bytes, f.n, from);
  }
}

void Hierarchy::gather_finish(std::size_t k, std::size_t bytes) {
  const int slot = static_cast<int>(k % kDepth);
  const Flight& f = flights_[slot];
  if (ring(Collective::kAllgather)) {
    ring_finish(slot, DType::kUInt8, ReduceOp::kSum);
  } else {
    wait_network(slot);
  }
  lay_out_blocks(nullptr, f.out, bytes, 0, f.n, false);
  node_.gather_piece(slices_, f.n * static_cast<std::size_t>(layout_.nodes * layout_.local_size),
                     f.n * static_cast<std::size_t>(layout_.nodes), DType::kUInt8);
}

}  // namespace dtrain::runtime
