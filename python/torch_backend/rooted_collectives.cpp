// torch's reduce, gather, scatter, all_to_all_single and all_to_all on backend "dtrain":
// libdtrain's rooted and all-to-all collectives (Comm::reduce, gather, scatter, alltoallv), which
// move each block only to the rank that needs it, any split sizes included. Queued and completed in
// order like every collective of the group (process_group.hpp).
#include <ATen/ATen.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "process_group.hpp"
#include "tensors.hpp"

namespace dtrain::torch_backend {
namespace {

void check_root(std::int64_t root, int size, std::string_view op) {
  if (root < 0 || root >= size) {
    refuse(op, "root " + std::to_string(root) + "; expected a rank from 0 to " +
                   std::to_string(size - 1));
  }
}

// An all-to-all side in bytes: each rank's block size and offset in one buffer.
struct Blocks {
  std::vector<std::size_t> bytes;
  std::vector<std::size_t> offsets;
};

Blocks blocks_of(const std::vector<std::size_t>& sizes) {
  Blocks b{sizes, std::vector<std::size_t>(sizes.size())};
  std::exclusive_scan(sizes.begin(), sizes.end(), b.offsets.begin(), std::size_t{0});
  return b;
}

// all_to_all_single's `t` (the input or output) as blocks of rows: `splits` (rows per rank) or,
// when empty, equal blocks.
Blocks row_blocks(const at::Tensor& t, const std::vector<std::int64_t>& splits, int size,
                  std::string_view op, const char* which) {
  const std::int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const std::size_t row_bytes = rows == 0 ? 0 : bytes_of(t) / static_cast<std::size_t>(rows);
  std::vector<std::size_t> sizes(static_cast<std::size_t>(size));
  if (splits.empty()) {
    if (rows % size != 0) {
      refuse(op, std::string(which) + ": " + std::to_string(rows) +
                     " rows; expected a multiple of the " + std::to_string(size) +
                     " ranks (equal blocks), or " + which + "_split_sizes");
    }
    for (auto& s : sizes) s = static_cast<std::size_t>(rows / size) * row_bytes;
    return blocks_of(sizes);
  }
  std::int64_t total = 0;
  for (const std::int64_t s : splits) total += s < 0 ? rows + 1 : s;
  if (splits.size() != sizes.size() || total != rows) {
    refuse(op, std::string(which) + "_split_sizes " + splits_text(splits) +
                   "; expected one size per rank (" + std::to_string(size) +
                   "), each 0 or more, adding up to the " + std::to_string(rows) + " rows of the " +
                   which);
  }
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    sizes[r] = static_cast<std::size_t>(splits[r]) * row_bytes;
  }
  return blocks_of(sizes);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  // The others' tensor is left as it was (as gloo leaves it): libdtrain writes only the root's.
  at::Tensor& t = only(tensors, "reduce");
  const Buffer b = reduced(t, "reduce", "tensor");
  const ReduceOp op = reduce_op(opts.reduceOp, "reduce");
  check_root(opts.rootRank, size_, "reduce");
  const int root = static_cast<int>(opts.rootRank);
  std::lock_guard lock(submit_);
  Pending p{
      {comm().reduce_async(b.data, root == rank_ ? b.data : nullptr, b.count, b.type, op, root)},
      {},
      {t},
      make_work(c10d::OpType::REDUCE, "dtrain:reduce", tensors, tensors)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  at::Tensor& in = only(inputs, "gather");
  const Buffer b = moved(in, "gather", "input");
  check_root(opts.rootRank, size_, "gather");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> outs;
  at::Tensor flat;
  if (root == rank_) {
    outs = per_rank(outputs, size_, "gather", "outputs");
    for (std::size_t r = 0; r < outs.size(); ++r) {
      same_shape(in, outs[r], "gather", ("outputs[" + std::to_string(r) + "]").c_str());
      moved(outs[r], "gather", "outputs[" + std::to_string(r) + "]");
    }
    // torch's list is not one buffer: the blocks land in one, then each is copied out.
    flat = at::empty({static_cast<std::int64_t>(b.count) * size_}, at::kByte);
  }
  std::lock_guard lock(submit_);
  Pending p{{comm().gather_async(b.data, flat.defined() ? flat.data_ptr() : nullptr, b.count,
                                 DType::kUInt8, root)},
            [outs, flat, bytes = b.count] {
              if (!flat.defined()) return;
              const auto* src = static_cast<const std::uint8_t*>(flat.data_ptr());
              for (std::size_t r = 0; r < outs.size(); ++r)
                std::memcpy(outs[r].data_ptr(), src + r * bytes, bytes);
            },
            {in, flat},
            make_work(c10d::OpType::GATHER, "dtrain:gather", outs, {in})};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  at::Tensor& out = only(outputs, "scatter");
  const Buffer b = moved(out, "scatter", "output");
  check_root(opts.rootRank, size_, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  at::Tensor flat;
  if (root == rank_) {
    std::vector<at::Tensor>& ins = per_rank(inputs, size_, "scatter", "inputs");
    flat = at::empty({static_cast<std::int64_t>(b.count) * size_}, at::kByte);
    auto* dst = static_cast<std::uint8_t*>(flat.data_ptr());
    for (std::size_t r = 0; r < ins.size(); ++r) {
      same_shape(out, ins[r], "scatter", ("inputs[" + std::to_string(r) + "]").c_str());
      moved(ins[r], "scatter", "inputs[" + std::to_string(r) + "]");
      std::memcpy(dst + r * b.count, ins[r].data_ptr(), b.count);
    }
  }
  std::lock_guard lock(submit_);
  Pending p{{comm().scatter_async(flat.defined() ? flat.data_ptr() : nullptr, b.data, b.count,
                                  DType::kUInt8, root)},
            {},
            {out, flat},
            make_work(c10d::OpType::SCATTER, "dtrain:scatter", outputs,
                      inputs.empty() ? std::vector<at::Tensor>{} : inputs[0])};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<std::int64_t>& output_splits,
    std::vector<std::int64_t>& input_splits, const c10d::AllToAllOptions& /*opts*/) {
  constexpr std::string_view op = "alltoall_base";
  const Buffer in = moved(input, op, "input");
  const Buffer out = moved(output, op, "output");
  if (output.scalar_type() != input.scalar_type()) {
    refuse(op, "output: " + torch_name(output.scalar_type()) + "; expected " +
                   torch_name(input.scalar_type()) + ", like the input");
  }
  const Blocks send = row_blocks(input, input_splits, size_, op, "input");
  const Blocks recv = row_blocks(output, output_splits, size_, op, "output");
  std::lock_guard lock(submit_);
  Pending p{{comm().alltoallv_async(in.data, send.bytes, send.offsets, out.data, recv.bytes,
                                    recv.offsets, DType::kUInt8)},
            {},
            {input, output},
            make_work(c10d::OpType::ALLTOALL_BASE, "dtrain:all_to_all_single", {output}, {input})};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions& /*opts*/) {
  constexpr std::string_view op = "alltoall";
  if (inputs.size() != static_cast<std::size_t>(size_) ||
      outputs.size() != static_cast<std::size_t>(size_)) {
    refuse(op, std::to_string(inputs.size()) + " inputs and " + std::to_string(outputs.size()) +
                   " outputs; expected one tensor per rank (" + std::to_string(size_) +
                   ") in each list");
  }
  // The lists are not one buffer each: the inputs packed into one, the blocks received into
  // another and copied out, any block size per rank.
  std::vector<std::size_t> send_sizes, recv_sizes;
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    send_sizes.push_back(moved(inputs[r], op, "inputs[" + std::to_string(r) + "]").count);
    recv_sizes.push_back(moved(outputs[r], op, "outputs[" + std::to_string(r) + "]").count);
  }
  Blocks send = blocks_of(send_sizes);
  Blocks recv = blocks_of(recv_sizes);
  at::Tensor packed =
      at::empty({static_cast<std::int64_t>(send.offsets.back() + send.bytes.back())}, at::kByte);
  at::Tensor flat =
      at::empty({static_cast<std::int64_t>(recv.offsets.back() + recv.bytes.back())}, at::kByte);
  auto* dst = static_cast<std::uint8_t*>(packed.data_ptr());
  for (std::size_t r = 0; r < inputs.size(); ++r)
    std::memcpy(dst + send.offsets[r], inputs[r].data_ptr(), send.bytes[r]);
  std::lock_guard lock(submit_);
  Pending p{{comm().alltoallv_async(packed.data_ptr(), send.bytes, send.offsets, flat.data_ptr(),
                                    recv.bytes, recv.offsets, DType::kUInt8)},
            [outputs, flat, recv] {
              const auto* src = static_cast<const std::uint8_t*>(flat.data_ptr());
              for (std::size_t r = 0; r < outputs.size(); ++r)
                std::memcpy(outputs[r].data_ptr(), src + recv.offsets[r], recv.bytes[r]);
            },
            {packed, flat},
            make_work(c10d::OpType::ALLTOALL, "dtrain:all_to_all", outputs, inputs)};
  return enqueue(std::move(p));
}

}  // namespace dtrain::torch_backend
