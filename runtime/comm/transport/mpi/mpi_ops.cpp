#include "comm/transport/mpi/mpi_ops.hpp"

#include <cstddef>

#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {
namespace {

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:  // never reaches MPI: summed, then divided (Communicator, allreduce_16bit)
      return MPI_SUM;
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kProduct:
      return MPI_PROD;
  }
  return MPI_OP_NULL;
}

// Open MPI 4.1's AVX reduction saturates 8-bit integer sums at 255 instead of wrapping modulo 256
// (open-mpi/ompi#8045, closed as won't fix), so the same uint8 call gave 144 through dtrain's own
// kernels (shared memory, recursive doubling, TCP) and 255 through MPI's, depending on the size and
// DTRAIN_SHM. uint8 therefore reduces with dtrain's kernels (reduce.hpp) on MPI's path too, as
// user-defined ops; MPI's own ops are right for the wider integers and for floats, and faster.
// MPI calls fn(in, inout): inout = in op inout, which for integers is inout op in.
template <ReduceOp kOp>
void uint8_kernel(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  reduce_into(inout, in, static_cast<std::size_t>(*len), DType::kUInt8, kOp);
}

// kSum, kMin, kMax, kProduct in that order (kAvg reaches MPI as kSum).
constexpr std::array<ReduceOp, 4> kOwnOps = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax,
                                             ReduceOp::kProduct};
constexpr std::array<MPI_User_function*, 4> kOwnKernels = {
    &uint8_kernel<ReduceOp::kSum>, &uint8_kernel<ReduceOp::kMin>, &uint8_kernel<ReduceOp::kMax>,
    &uint8_kernel<ReduceOp::kProduct>};

}  // namespace

MPI_Datatype mpi_type(DType type) {
  switch (type) {
    case DType::kFloat32:
      return MPI_FLOAT;
    case DType::kFloat64:
      return MPI_DOUBLE;
    case DType::kInt32:
      return MPI_INT32_T;
    case DType::kInt64:
      return MPI_INT64_T;
    case DType::kUInt8:
      return MPI_UINT8_T;
    case DType::kFloat16:
    case DType::kBFloat16:
      // Moved as bit patterns; reductions widen to float first (half.hpp).
      return MPI_UINT16_T;
  }
  return MPI_DATATYPE_NULL;
}

void MpiOps::create() {
  for (std::size_t i = 0; i < kOwnOps.size(); ++i) {
    check(MPI_Op_create(kOwnKernels[i], 1, &own_[i]), "init", "MPI_Op_create");
  }
}

void MpiOps::free() noexcept {
  for (MPI_Op& o : own_)
    if (o != MPI_OP_NULL) MPI_Op_free(&o);
}

MPI_Op MpiOps::op_for(DType type, ReduceOp op) const {
  if (type != DType::kUInt8) return mpi_op(op);
  const ReduceOp want = op == ReduceOp::kAvg ? ReduceOp::kSum : op;
  for (std::size_t i = 0; i < kOwnOps.size(); ++i)
    if (kOwnOps[i] == want) return own_[i];
  return mpi_op(op);
}

}  // namespace dtrain::runtime
