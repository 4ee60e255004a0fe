// Host collectives over TCP sockets, for jobs bootstrapped through a store (torchrun-style
// launches, PMIx without MPI). Connections made on first use to the peers each algorithm needs
// (tcp_peers.hpp: O(log N) per rank, never a full mesh): gloo-style rings (ring.hpp) for large
// messages, recursive doubling for small ones, the barrier and small broadcasts, a binomial tree
// for larger broadcasts.
// Every socket call has the collective's deadline; a peer that exits shows up at once as a closed
// connection, named. Point-to-point messages have sockets of their own (mailbox.hpp).
//
// The path of each call, and which paths exist, is the router's (router.hpp: route and set_up);
// this file gives it the transfer under its doubling and ring, the sockets and the set-up steps
// (NodeSetup): one POSIX shared-memory object when every rank is on this host (loopback TCP
// copies every byte through the kernel twice; the waits still watch the sockets) or per node for
// the hierarchy across nodes (node_memory.hpp), the shares between nodes over the data
// connections (tcp_peer_transport.hpp).
//
// Each pair of ranks has a data and a control connection (tcp_peers.hpp); the control one carries
// only the abort frame of a rank that stops because of a lost peer, naming the rank it lost, so
// whoever sees it go names the culprit, not the messenger (an in-band frame would be read as data
// mid-message). The diagnosis and its messages: tcp_loss.cpp; the frames sent and read, and the
// first failure kept: tcp_failures.cpp.
#include "comm/transport/tcp/tcp_communicator.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/algorithms/hierarchy.hpp"
#include "comm/algorithms/recursive_doubling.hpp"
#include "comm/algorithms/ring.hpp"
#include "comm/router.hpp"
#include "comm/transport/shm/node_memory.hpp"
#include "comm/transport/shm/posix_shm.hpp"
#include "comm/transport/tcp/call_framing.hpp"
#include "comm/transport/tcp/tcp_failures.hpp"
#include "comm/transport/tcp/tcp_loss.hpp"
#include "comm/transport/tcp/tcp_peer_transport.hpp"
#include "comm/transport/tcp/tcp_peers.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {
namespace {

using net::Clock;
using net::IoResult;

// every rank on one node (`hosts`: each rank's).
bool one_node(const std::vector<std::string>& hosts) {
  return std::all_of(hosts.begin(), hosts.end(), [&](const auto& h) { return h == hosts.front(); });
}

class TcpCommunicator final : public Communicator, private FlatCollectives, private NodeSetup {
 public:
  TcpCommunicator(Store& store, int rank, int size, const Settings& settings,
                  const std::string& node_name)
      : Communicator(size),
        rank_(rank),
        size_(size),
        deadline_(settings.deadline()),
        peers_(store, rank, size, deadline_.after, node_name),
        mailbox_(std::make_unique<Mailbox>(rank, size, peers_.mailbox_addresses(),
                                           peers_.take_mailbox_listener(), deadline_.after,
                                           deadline_.source, settings.shm_messages)),
        hosts_(peers_.nodes()),
        failures_(peers_, rank, size, hosts_, deadline_),
        router_(
            rank, size, !one_node(hosts_), LinkBackend::kTcp, *this, transfer(),
            [this] { wait_poll(); },
            /*doubling_polls=*/false) {
    router_.set_up(settings.algo, settings.shm, *this);
  }

 protected:
  // Every call names itself and starts its deadline, then takes the router's path
  // (router.hpp).
  void do_allreduce(const void* in, void* out, std::size_t count, DType type,
                    ReduceOp op) override {
    start_call("allreduce", {CallWhat::Kind::kAllreduce, type, op}, count);
    router_.allreduce(in, out, count, type, op);
  }

  bool do_allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op) override {
    std::uint64_t total = 0;
    for (const AllreducePart& p : parts) total += p.count;
    start_call("allreduce", {CallWhat::Kind::kAllreduce, type, op}, total);
    return router_.allreduce_parts(parts, type, op);
  }

  void do_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                         ReduceOp op) override {
    start_call("reduce_scatter", {CallWhat::Kind::kReduceScatter, type, op}, count);
    router_.reduce_scatter(in, out, count, type, op);
  }

 public:
  void allgather(const void* in, void* out, std::size_t count, DType type) override {
    start_call("allgather", {CallWhat::Kind::kAllgather, type, ReduceOp::kSum}, count);
    router_.allgather(in, out, count, type);
  }

  // Small ones by the doubling's broadcast, larger ones by a binomial tree (broadcast_tree).
  void broadcast(void* buf, std::size_t count, DType type, int root) override {
    const std::size_t bytes = count * dtype_size(type);
    start_call("broadcast",
               {CallWhat::Kind::kBroadcast, type, ReduceOp::kSum, static_cast<std::uint32_t>(root)},
               count);
    // Ranks that pass different roots may each send to ranks that never read it, and keep their
    // own data without a word (or all wait for each other until the deadline): the tree cannot
    // compare what it never receives. The doubling's messages carry this call's header on every
    // one of its edges, which compares every rank's count, type and root: a small broadcast
    // travels in them (one pass, log2(p) exchanges), a larger one has the doubling of 4-byte
    // messages first, then its tree. Both take the same edges in the same order, so ranks that
    // pass counts on either side of the threshold meet, and are named, as any others.
    if (doubling_broadcast_pays(bytes)) {
      router_.doubling().broadcast(buf, bytes, root);
      return;
    }
    std::int32_t agreed = 0;
    router_.doubling().allreduce(&agreed, &agreed, 1, DType::kInt32, ReduceOp::kMin);
    const std::vector<int> tree = broadcast_tree(rank_, root, size_);
    const bool has_parent = rank_ != root;  // tree.front()
    reach(tree, call_deadline_, "broadcast");
    if (has_parent) exchange(-1, nullptr, 0, tree.front(), buf, bytes, call_deadline_, "broadcast");
    for (std::size_t c = has_parent ? 1 : 0; c < tree.size(); ++c) {
      exchange(tree[c], buf, bytes, -1, nullptr, 0, call_deadline_, "broadcast");
    }
  }

  // log2(p) exchanges (the ring took 2 (p - 1) steps: at 1,024 ranks every barrier waited on
  // 2,046 rounds of the whole job).
  void barrier() override { (void)least(0, "barrier", CallWhat::Kind::kBarrier); }

  std::string_view backend() const override { return "tcp"; }
  std::string_view allreduce_transport() const override {
    return router_.allreduce_transport(backend());
  }
  std::string missing_ranks() const override {
    const std::string waiting = router_.missing_ranks();
    return waiting.empty() ? failures_.missing() : waiting;
  }
  bool enforces_deadline() const override { return true; }
  Mailbox* mailbox() override { return mailbox_.get(); }
  void abandon() noexcept override { abandoned_ = true; }

  // A clean end waits for every rank's, as MPI_Finalize does: under an MPI launcher a rank that
  // exits first with a non-zero status (85, a requeue after a checkpoint) has the launcher kill
  // the others while they still write or print. Not after a failure or an abandoned call (the
  // Engine abandons the backend on every failure, interrupt and abort), and never past the
  // deadline: a rank that is gone ends the wait at once.
  ~TcpCommunicator() override {
    // First: its sends delivered, its connections closed, so that a peer still waiting for a
    // message from this rank is told at once rather than after the finalize wait.
    mailbox_.reset();
    if (failures_.stopped() || failures_.failed() || abandoned_) return;
    try {
      (void)least(0, "finalize", CallWhat::Kind::kFinalize);
    } catch (...) {
      // A rank that left already: nothing to wait for.
    }
  }
  bool allreduce_polls(std::size_t bytes, DType type) const override {
    (void)type;
    return router_.polls(bytes);
  }

 private:
  // The flat collectives (FlatCollectives): the router's ring (ring.hpp), under the call's
  // deadline (start_call).
  void flat_allreduce(const void* in, void* out, std::size_t count, DType type,
                      ReduceOp op) override {
    router_.ring().allreduce(in, out, count, type, op);
  }
  void flat_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                           ReduceOp op) override {
    router_.ring().reduce_scatter(in, out, count, type, op);
  }
  void flat_allgather(const void* in, void* out, std::size_t count, DType type) override {
    router_.ring().allgather(in, out, count, type);
  }

  // The ring's and the doubling's messages: this call's (start_call) name and deadline.
  RecursiveDoubling::Transfer transfer() {
    return [this](const void* send, std::size_t send_bytes, int to, void* recv,
                  std::size_t recv_bytes, int from) {
      exchange(to, send, send_bytes, from, recv, recv_bytes, call_deadline_, call_);
    };
  }

  // The router's set-up steps (NodeSetup) over this rank's connections, each under the set-up's
  // deadline and named "init". The ring's neighbours first: every path uses them (the votes, the
  // barrier's fold, the ring). Connected only here, after the checks each rank makes alone
  // (Router::set_up), so that a setting the layout refuses throws on every rank alike, not first
  // on one rank that a rank still connecting to it would take for lost.
  std::int32_t least(std::int32_t value) override {
    reach({router_.ring().prev(), router_.ring().next()}, Clock::now() + deadline_.after, "init");
    return least(value, "init", CallWhat::Kind::kSetUp);
  }
  std::vector<std::string> hosts() override { return hosts_; }
  // One POSIX object per node (node_memory.hpp).
  std::vector<char*> map_node(const std::vector<int>& members, std::size_t piece_bytes) override {
    const auto deadline = Clock::now() + deadline_.after;
    const NodeMemoryLinks links{
        [this](std::int32_t value) { return least(value, "init", CallWhat::Kind::kSetUp); },
        [&](int peer, const void* buf, std::size_t bytes) {
          reach({peer}, deadline, "init");
          io(net::send_all(fd(peer), buf, bytes, deadline), peer, "init");
        },
        [&](int peer, void* buf, std::size_t bytes) {
          reach({peer}, deadline, "init");
          io(net::recv_all(fd(peer), buf, bytes, deadline), peer, "init");
        },
        [this] { barrier(); }};
    return runtime::map_node_memory(rank_, members, piece_bytes, links, node_memory_);
  }
  // The hierarchy's peers on other nodes (link_peers: a few per node on up to 4 nodes, the ring's
  // 2 beyond), never one per rank of the job, over the data connections.
  std::unique_ptr<PeerTransport> make_link(const NodeLayout& layout) override {
    const std::vector<int> link_peers = runtime::link_peers(layout);
    reach(link_peers, Clock::now() + deadline_.after, "init");
    std::vector<int> fds(static_cast<std::size_t>(size_), -1);
    for (int q : link_peers) fds[static_cast<std::size_t>(q)] = fd(q);
    return std::make_unique<TcpPeerTransport>(
        std::move(fds),
        [this](int peer, net::IoResult how, int error) {
          failures_.fail(Loss{peer, how, error, -1}, call_);
        },
        call_header_,
        [this](int peer, const CallHeader& theirs) {
          failures_.different_call(peer, call_header_, theirs, call_);
        });
  }

  // Whom the running allreduce waits for: to name at its deadline (`on_node_only` false), or,
  // read afresh, the ranks whose closed connection would end it (true: in the hierarchy, this
  // node's; the transport sees a peer on another node go itself).
  std::vector<int> waited_for(bool on_node_only = false) const {
    return router_.waiting(on_node_only);
  }

  // Called while a shared-memory or hierarchical allreduce waits: the deadline (the Engine's,
  // when it runs the call inline, and this call's own otherwise), and, at most once a
  // millisecond, the control connections: a peer whose control connection closed or brought an
  // abort frame, and that the wait still needs, has exited, been killed or stopped because of
  // another rank.
  void wait_poll() {
    try {
      poll();
    } catch (...) {
      // The deadline passed: tell the others whom this rank waited for before leaving.
      const std::vector<int> waiting = waited_for();
      if (!waiting.empty()) failures_.stop(Loss{waiting.front(), IoResult::kTimeout, 0, -1});
      throw;
    }
    const auto now = Clock::now();
    if (now > call_deadline_) {
      const std::vector<int> waiting = waited_for();
      if (!waiting.empty()) failures_.fail(Loss{waiting.front(), IoResult::kTimeout, 0, -1}, call_);
    }
    if (now - last_liveness_check_ < std::chrono::milliseconds(1)) return;
    last_liveness_check_ = now;
    other_calls_of_waited_for();
    failures_.watch([this] { return waited_for(true); }, call_);
  }

  // A rank this shared-memory wait still needs has not entered this call; a message of another
  // call from it on its data connection (nothing of a shared-memory call travels on a node's data
  // connections) says which one it is in: both calls are named at once, not after the deadline
  // with the other rank blamed for it (an allreduce here, a broadcast or barrier there). Only
  // peeked: a message of this call is read by whoever it is for.
  //
  // The wait is read again after the message: the rank may have done its part of this call and
  // sent its next call's message between the first look and the peek (this rank taken off its
  // core there: the checkpoint test's preemption allreduce, then the checkpoint's allgather, once
  // in a run of the integration tests). Its part was written before that message was sent, so
  // what is read after the message shows it; only a rank still missing then is in another call.
  void other_calls_of_waited_for() {
    for (int q : waited_for(true)) {
      if (q == rank_ || fd(q) < 0) continue;
      CallHeader theirs;
      const ssize_t n = ::recv(fd(q), &theirs, sizeof theirs, MSG_PEEK | MSG_DONTWAIT);
      if (n == static_cast<ssize_t>(sizeof theirs) && !(theirs == call_header_) &&
          still_waited_for(q)) {
        failures_.different_call(q, call_header_, theirs, call_);
      }
    }
  }
  bool still_waited_for(int q) const {
    const std::vector<int> now = waited_for(true);
    return std::find(now.begin(), now.end(), q) != now.end();
  }

  // Connects to `peers` (-1 and this rank skipped) where not connected yet; a peer that cannot be
  // reached, or a connected one that stopped meanwhile, is a loss like any other.
  void reach(const std::vector<int>& peers, Clock::time_point deadline, const char* what) {
    std::vector<int> wanted;
    for (int q : peers) {
      if (q >= 0 && q != rank_ && fd(q) < 0) wanted.push_back(q);
    }
    if (wanted.empty()) return;
    const TcpPeers::Outcome o = peers_.connect(wanted, deadline);
    if (o.how != IoResult::kOk) failures_.fail(Loss{o.peer, o.how, o.error, -1}, what);
  }

  // The least of every rank's `value` (the votes, the barrier) in log2(p) exchanges; `what`
  // names the call in a failure's message.
  std::int32_t least(std::int32_t value, const char* what, CallWhat::Kind kind) {
    start_call(what, {kind, DType::kInt32, ReduceOp::kMin}, 1);
    router_.doubling().allreduce(&value, &value, 1, DType::kInt32, ReduceOp::kMin);
    return value;
  }

  // Names the call, starts its deadline and sets the header each of its messages carries.
  void start_call(const char* name, const CallWhat& what, std::uint64_t count) {
    call_ = name;
    call_deadline_ = Clock::now() + deadline_.after;
    call_header_ = CallHeader::of(count, what);
  }

  int fd(int peer) const { return peers_.data(peer); }
  int control(int peer) const { return peers_.control(peer); }
  // Sends to rank `to` while receiving from rank `from` (-1: that side is not taken): a ring's
  // step, and recursive doubling's transport.
  void exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv,
                std::size_t recv_bytes, Clock::time_point deadline, const char* what) {
    reach({to, from}, deadline, what);
    // Each message carries the call (call_check.hpp), in the same system call as its bytes.
    net::Framed out = to >= 0 ? outgoing(call_header_, send, send_bytes) : net::Framed{};
    net::Framed in = from >= 0 ? incoming(recv, recv_bytes) : net::Framed{};
    int failed = -1;
    const IoResult r = net::exchange(to >= 0 ? fd(to) : -1, out, from >= 0 ? fd(from) : -1, in,
                                     &call_header_, deadline, &failed);
    if (r == IoResult::kMismatch) failures_.different_call(from, call_header_, header_of(in), what);
    io(r, to >= 0 && failed == fd(to) ? to : from, what);
  }

  void io(IoResult r, int peer, const char* what) {
    if (r == IoResult::kOk) return;
    failures_.fail(Loss{peer, r, errno, -1}, what);
  }

  int rank_;
  int size_;
  Timeout deadline_;                  // every call's (after) and where it came from, for the errors
  TcpPeers peers_;                    // the connections, made on first use
  std::unique_ptr<Mailbox> mailbox_;  // point-to-point messages, on sockets of its own
  std::vector<std::string> hosts_;    // every rank's host name
  TcpFailures failures_;              // the abort frames, the first failure, the liveness watch
  bool abandoned_ = false;            // the Engine gave up on this communicator (abandon())
  // The memory under the router's shared-memory paths (one of them at most: every rank on this
  // host, or this node's ranks in the hierarchy). Declared before the router, destroyed first.
  PosixShm node_memory_;
  Router router_;
  // The running call through shared memory or the hierarchy: its name and deadline.
  const char* call_ = "allreduce";
  CallHeader call_header_;  // what the running call's messages carry (start_call)
  Clock::time_point call_deadline_ = Clock::time_point::max();
  Clock::time_point last_liveness_check_{};
};

}  // namespace

std::unique_ptr<Communicator> make_tcp_communicator(Store& store, int rank, int size,
                                                    const Settings& settings,
                                                    const std::string& node_name) {
  return std::make_unique<TcpCommunicator>(store, rank, size, settings, node_name);
}

}  // namespace dtrain::runtime
