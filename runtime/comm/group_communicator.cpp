#include "comm/group_communicator.hpp"

#include <cstdint>
#include <utility>
#include <vector>

#include "comm/algorithms/log_step_allgather.hpp"
#include "comm/algorithms/recursive_doubling.hpp"
#include "comm/algorithms/ring.hpp"
#include "comm/call_check.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "comm/transport/tcp/call_framing.hpp"

namespace dtrain::runtime {
namespace {

// Up to this many bytes an allreduce goes by recursive doubling (log2(p) exchanges of the whole
// message), above it by the ring (2 (p - 1) steps of 1/p of it): the world's threshold on one node
// (recursive_doubling.hpp), where a group's messages also travel through the kernel.
constexpr std::size_t kDoublingUpTo = std::size_t{64} << 10;

class GroupCommunicator final : public Communicator {
 public:
  GroupCommunicator(Mailbox& mailbox, MessageSpace space, int rank, std::string backend,
                    Timeout timeout)
      : Communicator(space.size()),
        mailbox_(mailbox),
        space_(std::move(space)),
        rank_(rank),
        size_(space_.size()),
        backend_(std::move(backend)),
        timeout_(timeout),
        transfer_(transfer()),
        doubling_(rank, size_, transfer_),
        ring_(rank, size_, transfer_) {}

  void begin_call(std::uint64_t seq) override { tag_ = space_.call_tag(seq); }
  Mailbox* mailbox() override { return &mailbox_; }
  const MessageSpace& message_space() const override { return space_; }
  std::string_view backend() const override { return backend_; }
  bool enforces_deadline() const override { return true; }

  void broadcast(void* buf, std::size_t count, DType type, int root) override {
    start(count,
          {CallWhat::Kind::kBroadcast, type, ReduceOp::kSum, static_cast<std::uint32_t>(root)});
    const std::size_t bytes = count * dtype_size(type);
    const std::vector<int> tree = broadcast_tree(rank_, root, size_);
    const bool has_parent = rank_ != root;  // tree.front()
    if (has_parent) exchange(nullptr, 0, -1, buf, bytes, tree.front());
    std::vector<std::shared_ptr<Pending>> sends;
    for (std::size_t c = has_parent ? 1 : 0; c < tree.size(); ++c) {
      sends.push_back(mailbox_.send(buf, bytes, space_.world(tree[c]), tag_, space_.group_of(),
                                    timeout_, call_));
    }
    for (const auto& s : sends) Mailbox::wait(*s);
  }
  void allgather(const void* in, void* out, std::size_t count, DType type) override {
    start(count, {CallWhat::Kind::kAllgather, type});
    const std::size_t bytes = count * dtype_size(type);
    if (bytes * static_cast<std::size_t>(size_) <= kLogStepAllgatherUpTo) {
      log_step_allgather(rank_, size_, transfer_, in, out, bytes);
    } else {
      ring_.allgather(in, out, count, type);
    }
  }
  void barrier() override {
    start(0, {CallWhat::Kind::kBarrier, DType::kInt32});
    std::int32_t token = 0;
    doubling_.allreduce(&token, &token, 1, DType::kInt32, ReduceOp::kSum);
  }

 protected:
  void do_allreduce(const void* in, void* out, std::size_t count, DType type,
                    ReduceOp op) override {
    start(count, {CallWhat::Kind::kAllreduce, type, op});
    if (count * dtype_size(type) <= kDoublingUpTo) {
      doubling_.allreduce(in, out, count, type, op);
    } else {
      ring_.allreduce(in, out, count, type, op);
    }
  }
  void do_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                         ReduceOp op) override {
    start(count, {CallWhat::Kind::kReduceScatter, type, op});
    ring_.reduce_scatter(in, out, count, type, op);
  }

 private:
  // The running call's header, which each of its messages carries and its receives compare: ranks
  // that pass different types, operations or roots are told, naming both (mailbox.hpp).
  void start(std::size_t count, const CallWhat& what) { call_ = CallHeader::of(count, what); }

  // One step of a schedule: `send_bytes` to group rank `to` while `recv_bytes` come from `from`
  // (-1: none), both under the running call's tag.
  void exchange(const void* send, std::size_t send_bytes, int to, void* recv,
                std::size_t recv_bytes, int from) {
    std::shared_ptr<Pending> r;
    std::shared_ptr<Pending> s;
    // The group's numbering: its errors name each rank as "group rank 1 (world rank 5)".
    if (from >= 0) {
      r = mailbox_.receive(recv, recv_bytes, space_.world(from), tag_, space_.group_of(), timeout_,
                           call_);
    }
    if (to >= 0) {
      s = mailbox_.send(send, send_bytes, space_.world(to), tag_, space_.group_of(), timeout_,
                        call_);
    }
    try {
      if (s) Mailbox::wait(*s);
      if (r) Mailbox::wait(*r);
    } catch (...) {
      // The receive must not write into `recv` after this call gave it back.
      if (r && r->expire) r->expire();
      throw;
    }
  }
  RecursiveDoubling::Transfer transfer() {
    return
        [this](const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes,
               int from) { exchange(send, send_bytes, to, recv, recv_bytes, from); };
  }

  Mailbox& mailbox_;
  MessageSpace space_;
  int rank_;
  int size_;
  std::string backend_;
  Timeout timeout_;
  std::int64_t tag_ = 0;                  // the running call's (begin_call)
  CallHeader call_;                       // the running call's (start)
  RecursiveDoubling::Transfer transfer_;  // the schedules' steps (exchange)
  RecursiveDoubling doubling_;
  Ring ring_;
};

}  // namespace

std::unique_ptr<Communicator> make_group_communicator(Mailbox& mailbox, MessageSpace space,
                                                      int rank, std::string backend,
                                                      Timeout timeout) {
  return std::make_unique<GroupCommunicator>(mailbox, std::move(space), rank, std::move(backend),
                                             timeout);
}

}  // namespace dtrain::runtime
