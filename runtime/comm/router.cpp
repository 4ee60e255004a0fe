#include "comm/router.hpp"

#include <numeric>
#include <utility>

#include "comm/algorithms/log_step_allgather.hpp"

namespace dtrain::runtime {

std::string_view path_name(Path path) {
  switch (path) {
    case Path::kSharedMemory:
      return "shared memory";
    case Path::kHierarchy:
      return "hierarchical";
    case Path::kDoubling:
      return "recursive doubling";
    case Path::kHalving:
      return "recursive halving";
    case Path::kLogSteps:
      return "log-step allgather";
    case Path::kRing:
      return "ring";
    case Path::kFlat:
      break;
  }
  return "flat";
}

std::size_t halving_up_to(LinkBackend backend) {
  return backend == LinkBackend::kTcp ? std::size_t{256} << 10 : 0;
}

std::size_t log_step_allgather_up_to(LinkBackend backend) {
  return backend == LinkBackend::kTcp ? kLogStepAllgatherUpTo : 0;
}

Path route(const RouteFacts& facts, Collective op, std::size_t bytes) {
  const bool allreduce = op == Collective::kAllreduce;
  if (allreduce && facts.shared_memory) return Path::kSharedMemory;
  if (bytes > facts.hierarchy_above[static_cast<std::size_t>(op)]) return Path::kHierarchy;
  if (allreduce && facts.size > 1 && doubling_pays(facts.size, facts.across_nodes, bytes)) {
    return Path::kDoubling;
  }
  if (allreduce && facts.across_nodes && bytes <= facts.halving_up_to) return Path::kHalving;
  if (op == Collective::kAllgather && bytes <= facts.log_step_allgather_up_to) {
    return Path::kLogSteps;
  }
  if (!allreduce && facts.across_nodes && bytes > kRingAbove) return Path::kRing;
  return Path::kFlat;
}

Router::Router(int rank, int size, bool across_nodes, LinkBackend backend, FlatCollectives& flat,
               RecursiveDoubling::Transfer transfer, std::function<void()> wait,
               bool doubling_polls)
    : rank_(rank),
      backend_(backend),
      flat_(flat),
      wait_(std::move(wait)),
      doubling_polls_(doubling_polls),
      transfer_(std::move(transfer)),
      doubling_(rank, size, transfer_),
      ring_(rank, size, transfer_) {
  facts_.size = size;
  facts_.across_nodes = across_nodes;
  facts_.log_step_allgather_up_to = log_step_allgather_up_to(backend);
  if (across_nodes) facts_.halving_up_to = halving_up_to(backend);
}

void Router::set_up(AllreduceAlgo algo, bool shm, NodeSetup& node) {
  const bool one_node = !facts_.across_nodes;
  NodeLayout layout;
  std::int32_t vote = 0;
  if (one_node) {
    shm = node.least(shm ? 1 : 0) == 1;
    if (shm) {
      std::vector<int> everyone(static_cast<std::size_t>(facts_.size));
      std::iota(everyone.begin(), everyone.end(), 0);
      std::vector<char*> segments = node.map_node(everyone, ShmAllreduce::kPieceBytes);
      if (!segments.empty()) share_node(std::move(segments));
      return;
    }
  }
  layout = plan_layout(node.hosts(), rank_);
  vote = hierarchy_vote(algo, shm, backend_, layout);
  vote = node.least(vote);
  if (vote == 0) return;
  std::vector<char*> segments = node.map_node(layout.node_ranks, Hierarchy::kPieceBytes);
  if (segments.empty()) return;
  std::unique_ptr<PeerTransport> link = node.make_link(layout);
  build_hierarchy(std::move(layout), vote, backend_, std::move(segments), std::move(link));
}

void Router::share_node(std::vector<char*> segments) {
  shm_ = std::make_unique<ShmAllreduce>(rank_, std::move(segments), wait_);
  facts_.shared_memory = true;
}

void Router::build_hierarchy(NodeLayout layout, int vote, LinkBackend backend,
                             std::vector<char*> node_segments,
                             std::unique_ptr<PeerTransport> link) {
  link_ = std::move(link);
  // While the node's ranks wait on each other, the pieces on the network keep moving.
  node_shm_ = std::make_unique<ShmAllreduce>(
      layout.local_rank, std::move(node_segments),
      [this] {
        wait_();
        link_->progress();
      },
      Hierarchy::kPieceBytes);
  hier_ = std::make_unique<Hierarchy>(std::move(layout), voted_algo(vote), backend, *node_shm_,
                                      *link_, wait_);
  for (Collective op :
       {Collective::kAllreduce, Collective::kReduceScatter, Collective::kAllgather}) {
    facts_.hierarchy_above[static_cast<std::size_t>(op)] = hier_->above(op);
  }
}

void Router::release() noexcept {
  facts_.shared_memory = false;
  facts_.hierarchy_above = {kNever, kNever, kNever};
  shm_.reset();
  hier_.reset();
  node_shm_.reset();
  link_.reset();
}

void Router::allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  switch (path(Collective::kAllreduce, count * dtype_size(type))) {
    case Path::kSharedMemory:
      shm_->allreduce(in, out, count, type, op);
      return;
    case Path::kHierarchy:
      hier_->allreduce(in, out, count, type, op);
      return;
    case Path::kDoubling:
      doubling_.allreduce(in, out, count, type, op);
      return;
    case Path::kHalving:
      doubling_.allreduce_halving(in, out, count, type, op);
      return;
    case Path::kLogSteps:  // route() gives the log-step path to allgathers only
    case Path::kRing:      // and the ring to reduce_scatter and allgather only
    case Path::kFlat:
      break;
  }
  flat_.flat_allreduce(in, out, count, type, op);
}

bool Router::allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op) {
  if (!shm_) return false;
  shm_->allreduce(parts, type, op);
  return true;
}

void Router::reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(type) * static_cast<std::size_t>(facts_.size);
  switch (path(Collective::kReduceScatter, bytes)) {
    case Path::kHierarchy:
      hier_->reduce_scatter(in, out, count, type, op);
      return;
    case Path::kRing:
      ring_.reduce_scatter(in, out, count, type, op);
      return;
    default:
      break;
  }
  flat_.flat_reduce_scatter(in, out, count, type, op);
}

void Router::allgather(const void* in, void* out, std::size_t count, DType type) {
  const std::size_t bytes = count * dtype_size(type);
  switch (path(Collective::kAllgather, bytes * static_cast<std::size_t>(facts_.size))) {
    case Path::kHierarchy:
      hier_->allgather(in, out, bytes);
      return;
    case Path::kLogSteps:
      log_step_allgather(rank_, facts_.size, transfer_, in, out, bytes);
      return;
    case Path::kRing:
      ring_.allgather(in, out, count, type);
      return;
    default:
      break;
  }
  flat_.flat_allgather(in, out, count, type);
}

std::string_view Router::allreduce_transport(std::string_view backend) const {
  if (shm_) return path_name(Path::kSharedMemory);
  if (hier_ && hier_->carries(Collective::kAllreduce)) return path_name(Path::kHierarchy);
  return backend;
}

bool Router::polls(std::size_t bytes) const {
  switch (path(Collective::kAllreduce, bytes)) {
    case Path::kSharedMemory:
    case Path::kHierarchy:
      return true;
    case Path::kDoubling:
    case Path::kHalving:
    case Path::kLogSteps:
    case Path::kRing:
      return doubling_polls_;
    case Path::kFlat:
      break;
  }
  return false;
}

std::string Router::missing_ranks() const {
  return shm_ ? shm_->missing_ranks() : hier_ ? hier_->missing_ranks() : "";
}

std::vector<int> Router::waiting(bool on_node_only) const {
  if (shm_) return shm_->missing();
  if (hier_) return on_node_only ? hier_->missing_on_node() : hier_->missing();
  return {};
}

}  // namespace dtrain::runtime
