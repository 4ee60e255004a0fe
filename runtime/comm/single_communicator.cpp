// The one-rank world: every reduction over one contribution is that contribution, so an
// allreduce is a copy (exact for every op, kAvg included: x / 1 == x).
#include <cstring>

#include "comm/single_communicator.hpp"

#include "comm/point_to_point/mailbox.hpp"

namespace dtrain::runtime {
namespace {

void copy(const void* in, void* out, std::size_t count, DType type) {
  if (in != out && count > 0) std::memcpy(out, in, count * dtype_size(type));
}

class SingleCommunicator final : public Communicator {
 public:
  explicit SingleCommunicator(std::chrono::milliseconds timeout)
      : Communicator(1), mailbox_(0, 1, {}, net::Socket(), timeout) {}
  void broadcast(void*, std::size_t, DType, int) override {}
  void allgather(const void* in, void* out, std::size_t count, DType type) override {
    copy(in, out, count, type);
  }
  void barrier() override {}
  std::string_view backend() const override { return "single"; }
  bool remote() const override { return false; }
  Mailbox* mailbox() override { return &mailbox_; }

 protected:
  void do_allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp) override {
    copy(in, out, count, type);
  }
  void do_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                         ReduceOp) override {
    copy(in, out, count, type);
  }
  bool averages(DType) const override { return true; }  // x / 1 == x: nothing to divide

 private:
  Mailbox mailbox_;
};

}  // namespace

std::unique_ptr<Communicator> make_single_communicator(std::chrono::milliseconds timeout) {
  return std::make_unique<SingleCommunicator>(timeout);
}

}  // namespace dtrain::runtime
