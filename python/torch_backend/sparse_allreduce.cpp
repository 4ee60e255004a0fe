// all_reduce of a sparse COO tensor (ProcessGroupDtrain::sparse_allreduce), as gloo does it: each
// rank's nonzeros are gathered by every rank and summed there. libdtrain reduces dense buffers
// only, and the ranks' index sets differ, so no element-wise reduction applies: every rank
// gathers every rank's indices and values (three allgathers: the shapes and counts, then the
// indices and the values, each padded to the largest count), builds the sum with torch's own
// sparse addition and writes it into the caller's tensor.
#include <ATen/ATen.h>

#include <c10/util/accumulate.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gil.hpp"
#include "process_group.hpp"

namespace dtrain::torch_backend {
namespace {

constexpr const char* kOp = "allreduce";

// What every rank must agree on before its nonzeros can be summed with the others'.
std::vector<std::int64_t> shape_of(const at::Tensor& t) {
  std::vector<std::int64_t> v = {t._nnz(), t.sparse_dim(), t.dense_dim(),
                                 static_cast<std::int64_t>(t.scalar_type())};
  for (const std::int64_t s : t.sizes()) v.push_back(s);
  return v;
}

// torch's name of a reduction libdtrain has too, as the user wrote it: "ReduceOp.MAX".
std::string torch_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "ReduceOp.SUM";
    case ReduceOp::kAvg:
      return "ReduceOp.AVG";
    case ReduceOp::kProduct:
      return "ReduceOp.PRODUCT";
    case ReduceOp::kMin:
      return "ReduceOp.MIN";
    case ReduceOp::kMax:
      return "ReduceOp.MAX";
  }
  return "ReduceOp." + std::string(to_string(op));
}

std::string sizes_text(const std::int64_t* sizes, std::size_t n) {
  std::vector<std::int64_t> v(sizes, sizes + n);
  return splits_text(v);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::sparse_allreduce(
    at::Tensor& tensor, const c10d::AllreduceOptions& opts) {
  if (opts.reduceOp.op_ != c10d::ReduceOp::SUM) {
    refuse(kOp, "tensor: layout Sparse with op " + torch_op_name(reduce_op(opts.reduceOp, kOp)) +
                    "; expected ReduceOp.SUM (sparse tensors are summed only, as gloo does)");
  }
  if (tensor.is_cuda()) {
    refuse(kOp, "tensor: layout Sparse on " + tensor.device().str() +
                    "; expected a CPU tensor (sparse tensors are gathered through the CPU)");
  }
  const at::Tensor input = tensor.coalesce();
  const std::vector<std::int64_t> mine = shape_of(input);
  const std::size_t fields = mine.size();
  const auto n = static_cast<std::size_t>(size_);
  std::vector<std::int64_t> shapes(fields * n);
  std::lock_guard lock(submit_);
  at::Tensor sum;
  python::without_gil([&] {
    // Collectives in the order submitted: after the ones still queued on this group.
    Comm& c = comm();
    c.allgather(mine.data(), shapes.data(), fields, DType::kInt64);
    std::int64_t most = 0;
    for (std::size_t r = 0; r < n; ++r) {
      const std::int64_t* theirs = shapes.data() + r * fields;
      if (!std::equal(mine.begin() + 1, mine.end(), theirs + 1)) {
        refuse(kOp, "tensor: rank " + std::to_string(r) + "'s sparse tensor is " +
                        torch_name(static_cast<c10::ScalarType>(theirs[3])) + " of size " +
                        sizes_text(theirs + 4, fields - 4) + " (" + std::to_string(theirs[1]) +
                        " sparse dimensions); expected this rank's, " +
                        torch_name(input.scalar_type()) + " of size " +
                        sizes_text(mine.data() + 4, fields - 4) + " (" + std::to_string(mine[1]) +
                        ")");
      }
      most = std::max(most, theirs[0]);
    }
    // Padded to the largest count: libdtrain's allgather moves equal blocks.
    const at::Tensor values = input.values().contiguous();
    const std::int64_t row_bytes =
        c10::multiply_integers(values.sizes().slice(1)) * values.element_size();
    const std::int64_t sparse_dim = input.sparse_dim();
    at::Tensor indices = at::zeros({sparse_dim, most}, at::kLong);
    indices.narrow(1, 0, input._nnz()).copy_(input.indices());
    at::Tensor rows = at::zeros({most * row_bytes}, at::kByte);
    if (bytes_of(values) > 0) std::memcpy(rows.data_ptr(), values.data_ptr(), bytes_of(values));
    at::Tensor all_indices = at::empty({static_cast<std::int64_t>(n), sparse_dim, most}, at::kLong);
    at::Tensor all_rows = at::empty({static_cast<std::int64_t>(n) * most * row_bytes}, at::kByte);
    if (most > 0) {
      c.allgather(indices.data_ptr(), all_indices.data_ptr(),
                  static_cast<std::size_t>(sparse_dim * most), DType::kInt64);
      c.allgather(rows.data_ptr(), all_rows.data_ptr(), static_cast<std::size_t>(most * row_bytes),
                  DType::kUInt8);
    }
    sum = at::zeros_like(input);
    for (std::size_t r = 0; r < n; ++r) {
      const std::int64_t nnz = shapes[r * fields];
      if (nnz == 0) continue;
      std::vector<std::int64_t> value_shape(values.sizes().begin(), values.sizes().end());
      value_shape[0] = nnz;
      at::Tensor their_values = at::empty(value_shape, values.options());
      std::memcpy(their_values.data_ptr(),
                  static_cast<std::uint8_t*>(all_rows.data_ptr()) +
                      static_cast<std::int64_t>(r) * most * row_bytes,
                  static_cast<std::size_t>(nnz * row_bytes));
      at::Tensor their_indices = all_indices[static_cast<std::int64_t>(r)].narrow(1, 0, nnz);
      sum = sum + at::sparse_coo_tensor(their_indices, their_values, input.sizes());
    }
  });
  tensor.copy_(sum.coalesce());
  return enqueue(Pending{
      {}, {}, {}, make_work(c10d::OpType::ALLREDUCE, "dtrain:all_reduce", {tensor}, {tensor})});
}

}  // namespace dtrain::torch_backend
