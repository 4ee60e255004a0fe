// Communicator's reductions: kAvg becomes kSum plus one division here (communicator.hpp).
#include "comm/communicator.hpp"

#include "comm/algorithms/reduce.hpp"
#include "comm/point_to_point/message_space.hpp"

namespace dtrain::runtime {

const MessageSpace& Communicator::message_space() const {
  static const MessageSpace world;
  return world;
}

void Communicator::allreduce(const void* in, void* out, std::size_t count, DType type,
                             ReduceOp op) {
  if (!divides(type, op)) {
    do_allreduce(in, out, count, type, op);
    return;
  }
  do_allreduce(in, out, count, type, ReduceOp::kSum);
  divide_by(out, count, type, size_);
}

bool Communicator::allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op) {
  if (!divides(type, op)) return do_allreduce_parts(parts, type, op);
  if (!do_allreduce_parts(parts, type, ReduceOp::kSum)) return false;
  for (const AllreducePart& p : parts) divide_by(p.out, p.count, type, size_);
  return true;
}

void Communicator::reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                                  ReduceOp op) {
  if (!divides(type, op)) {
    do_reduce_scatter(in, out, count, type, op);
    return;
  }
  do_reduce_scatter(in, out, count, type, ReduceOp::kSum);
  divide_by(out, count, type, size_);
}

}  // namespace dtrain::runtime
