// The ring among node peers (hierarchy.hpp): local rank l of every node, in node order, passes
// segments of its share to the next node's local rank l. One ring per piece on the network, all
// moved a step per round, so the transfer of each piece overlaps the others' and the node's
// shared-memory work on the pieces around them.
#include <algorithm>

#include "comm/algorithms/hierarchy.hpp"
#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {

RingStep Hierarchy::ring_step_of(const RingFlight& ring) const {
  const int nodes = layout_.nodes;
  // The allreduce's allgather steps follow its reduce-scatter steps.
  const bool gathering = ring.kind == RingKind::kAllgather ||
                         (ring.kind == RingKind::kAllreduce && ring.step >= nodes - 1);
  const int step =
      ring.kind == RingKind::kAllreduce && gathering ? ring.step - (nodes - 1) : ring.step;
  return ring_step(layout_.node, nodes, step, gathering);
}

void Hierarchy::ring_start(int slot, RingKind kind, std::size_t elem, char* scratch) {
  RingFlight& ring = rings_[slot];
  ring.kind = kind;
  ring.step = 0;
  ring.steps = (kind == RingKind::kAllreduce ? 2 : 1) * (layout_.nodes - 1);
  ring.elem = elem;
  ring.scratch = scratch;
  if (ring.steps == 0) return;
  ring_order_.push_back(slot);
  ring_post(slot);
}

void Hierarchy::ring_post(int slot) {
  const RingFlight& ring = rings_[slot];
  const RingStep step = ring_step_of(ring);
  const int nodes = layout_.nodes;
  const auto peer = [&](int node) {
    return layout_.peers[static_cast<std::size_t>((node + nodes) % nodes)];
  };
  // Every peer cuts its share alike, so a segment empty here is empty there too and neither
  // side posts it.
  const Segment& out = ring.segments[static_cast<std::size_t>(step.send)];
  const Segment& in = ring.segments[static_cast<std::size_t>(step.recv)];
  if (out.count > 0) net_.send(slot, out.data, out.count * ring.elem, peer(layout_.node + 1));
  if (in.count > 0) {
    net_.recv(slot, step.reduce ? ring.scratch : in.data, in.count * ring.elem,
              peer(layout_.node - 1));
  }
}

void Hierarchy::ring_round(DType type, ReduceOp op) {
  for (int slot : ring_order_) {
    RingFlight& ring = rings_[slot];
    wait_network(slot);
    const RingStep step = ring_step_of(ring);
    const Segment& in = ring.segments[static_cast<std::size_t>(step.recv)];
    // Its own partial first, then what the ring brought: each segment is reduced once, along
    // the ring, and only copied after, so every rank gets the same bits.
    if (step.reduce && in.count > 0) reduce_into(in.data, ring.scratch, in.count, type, op);
    if (++ring.step < ring.steps) {
      ring_post(slot);
    } else {
      ring.steps = 0;
    }
  }
  std::erase_if(ring_order_, [&](int slot) { return rings_[slot].steps == 0; });
}

void Hierarchy::ring_finish(int slot, DType type, ReduceOp op) {
  while (rings_[slot].steps != 0) ring_round(type, op);
}

}  // namespace dtrain::runtime
