#include <cstring>

#include "comm/backends.hpp"

namespace dtrain {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
  }
  return 0;
}

namespace detail {

void check_reduce(DType type, ReduceOp op) {
  if (op == ReduceOp::kAvg && (type == DType::kInt32 || type == DType::kInt64)) {
    throw Error(Error::Code::kInvalid,
                "dtrain: allreduce: average of integers is not defined; expected float32 or "
                "float64 data, or ReduceOp::kSum");
  }
}

namespace {

class SingleCommunicator : public Communicator {
 public:
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) override {
    check_reduce(type, op);
    if (in != out && count > 0) std::memmove(out, in, count * dtype_size(type));
  }
  void broadcast(void*, std::size_t, DType, int root) override {
    if (root != 0) {
      throw Error(Error::Code::kInvalid, "dtrain: broadcast: root " + std::to_string(root) +
                                             " does not exist; expected 0 in a 1-rank job");
    }
  }
  void barrier() override {}
  std::string backend() const override { return "single"; }
};

}  // namespace

std::unique_ptr<Communicator> make_single_communicator() {
  return std::make_unique<SingleCommunicator>();
}

}  // namespace detail
}  // namespace dtrain
