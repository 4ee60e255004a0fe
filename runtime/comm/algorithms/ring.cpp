#include "comm/algorithms/ring.hpp"

#include <algorithm>
#include <cstring>

#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {

RingStep ring_step(int position, int size, int step, bool allgather) {
  const auto seg = [size](int s) { return ((s % size) + size) % size; };
  if (allgather) return {seg(position - step), seg(position - step - 1), false};
  return {seg(position - step - 1), seg(position - step - 2), true};
}

std::vector<std::size_t> Ring::blocks(std::size_t count) const {
  std::vector<std::size_t> start(static_cast<std::size_t>(size_) + 1);
  for (int s = 0; s <= size_; ++s) {
    start[static_cast<std::size_t>(s)] = count * static_cast<std::size_t>(s);
  }
  return start;
}

void Ring::allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  if (in != out) std::memcpy(out, in, count * elem);
  // Segment boundaries: rank-sized pieces, the remainder spread over the first ones.
  const auto p = static_cast<std::size_t>(size_);
  std::vector<std::size_t> start(p + 1);
  for (std::size_t s = 0; s <= p; ++s) start[s] = count / p * s + std::min(s, count % p);
  reduce_scatter_segments(static_cast<char*>(out), start, elem, type, op);
  allgather_segments(static_cast<char*>(out), start, elem);
}

void Ring::reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  const std::size_t total = count * static_cast<std::size_t>(size_) * elem;
  if (work_.size() < total) work_.resize(total);
  std::memcpy(work_.data(), in, total);
  const std::vector<std::size_t> start = blocks(count);
  reduce_scatter_segments(work_.data(), start, elem, type, op);
  std::memcpy(out, work_.data() + start[static_cast<std::size_t>(rank_)] * elem, count * elem);
}

void Ring::allgather(const void* in, void* out, std::size_t count, DType type) {
  const std::size_t elem = dtype_size(type);
  char* o = static_cast<char*>(out);
  std::memmove(o + static_cast<std::size_t>(rank_) * count * elem, in, count * elem);
  allgather_segments(o, blocks(count), elem);
}

void Ring::reduce_scatter_segments(char* buf, const std::vector<std::size_t>& start,
                                   std::size_t elem, DType type, ReduceOp op) {
  if (size_ == 1) return;
  std::size_t most = 0;
  for (std::size_t s = 0; s + 1 < start.size(); ++s) most = std::max(most, start[s + 1] - start[s]);
  if (scratch_.size() < most * elem) scratch_.resize(most * elem);
  for (int step = 0; step < size_ - 1; ++step) {
    const RingStep s = ring_step(rank_, size_, step, false);
    const auto send = static_cast<std::size_t>(s.send);
    const auto recv = static_cast<std::size_t>(s.recv);
    const std::size_t recv_n = start[recv + 1] - start[recv];
    transfer_(buf + start[send] * elem, (start[send + 1] - start[send]) * elem, next(),
              scratch_.data(), recv_n * elem, prev());
    reduce_into(buf + start[recv] * elem, scratch_.data(), recv_n, type, op);
  }
}

void Ring::allgather_segments(char* buf, const std::vector<std::size_t>& start, std::size_t elem) {
  if (size_ == 1) return;
  for (int step = 0; step < size_ - 1; ++step) {
    const RingStep s = ring_step(rank_, size_, step, true);
    const auto send = static_cast<std::size_t>(s.send);
    const auto recv = static_cast<std::size_t>(s.recv);
    transfer_(buf + start[send] * elem, (start[send + 1] - start[send]) * elem, next(),
              buf + start[recv] * elem, (start[recv + 1] - start[recv]) * elem, prev());
  }
}

}  // namespace dtrain::runtime
