// MPI over host memory: MPI's collectives for large messages, dtrain's recursive doubling over
// point-to-point messages for small ones, the shared-memory allreduce when every rank is on
// this node, and the hierarchical allreduce (shared memory in each node, MPI point to point
// between nodes) when ranks share nodes across several. Which of them a call takes, and which
// exist, is the router's (router.hpp: route and set_up); this file gives it MPI's collectives,
// the transfer and the set-up steps (mpi_node_setup.hpp).
#include "comm/transport/mpi/mpi_communicator.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "comm/algorithms/half.hpp"
#include "comm/algorithms/piece_tuner.hpp"
#include "comm/algorithms/reduce.hpp"
#include "comm/router.hpp"
#include "comm/transport/mpi/mpi_exchanges.hpp"
#include "comm/transport/mpi/mpi_node_setup.hpp"
#include "comm/transport/mpi/mpi_ops.hpp"
#include "mpi/mpi.hpp"
#include "mpi/mpi_api.hpp"

namespace dtrain::runtime {
namespace {

// Large messages go to MPI in pieces. Open MPI 4.1 allocates a temporary buffer the size of the
// message on every large allreduce, and glibc serves big ones with fresh mmaps (or, on the
// progress thread's arena, trims them back) so every call pays page faults: ~0.45 GB/s instead of
// 4-6 (docs/benchmarks.md). Pieces of at most 16 MiB stay below glibc's largest dynamic mmap
// threshold (32 MiB), so the same heap memory is reused call after call. Broadcasts and widened
// float16/bfloat16 go in pieces of kChunkBytes; an allreduce of more than kChunkBytes goes in the
// piece size PieceTuner measures best, or DTRAIN_PIECE_BYTES.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxPieceBytes = std::size_t{1} << 30;  // MPI counts are int

// Any tag: the communicator is private to dtrain and its messages never overtake each other.
constexpr int kTag = 7701;

class MpiCommunicator final : public Communicator, private FlatCollectives {
 public:
  MpiCommunicator(const WorldInfo& world, bool owns_mpi, const Settings& settings)
      : Communicator(world.size),
        rank_(world.rank),
        size_(world.size),
        tuner_(std::min(settings.piece_bytes, kMaxPieceBytes)),
        owns_mpi_(owns_mpi) {
    if (mpi_finalized()) throw_finalized("");
    if (start_mpi("init")) owns_mpi_ = true;
    // A private communicator keeps our traffic apart from the application's own MPI calls, and
    // returning error codes on it (not on MPI_COMM_WORLD, which belongs to the application) turns
    // failures into dtrain::Error instead of aborting the job.
    try {
      ops_.create();
      check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "init", "MPI_Comm_dup");
      check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "init", "MPI_Comm_set_errhandler");
      int mpi_rank = -1;
      int mpi_size = -1;
      check(MPI_Comm_rank(comm_, &mpi_rank), "init", "MPI_Comm_rank");
      check(MPI_Comm_size(comm_, &mpi_size), "init", "MPI_Comm_size");
      if (mpi_rank != world.rank || mpi_size != world.size) {
        throw Error(Error::Code::kComm,
                    "dtrain: mpi: init: MPI and the " + world.bootstrap +
                        " bootstrap disagree about this process; expected rank " +
                        std::to_string(world.rank) + " of " + std::to_string(world.size) +
                        ", got rank " + std::to_string(mpi_rank) + " of " +
                        std::to_string(mpi_size) + " (two launchers?)");
      }
      MPI_Comm node = MPI_COMM_NULL;
      check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "init",
            "MPI_Comm_split_type");
      try {
        node_processes_ = exchange_node_processes(node, rank_, world.hostname);
        alarm_ = exchange_alarm_endpoints(comm_, rank_, size_, world.hostname, node_processes_,
                                          settings.alarm_fd);
        mailbox_ = exchange_mailbox_addresses(comm_, rank_, size_, world.hostname, settings.timeout,
                                              settings.shm_messages);
        int node_size = 0;
        MPI_Comm_size(node, &node_size);
        // The paths and their set-up (router.hpp): recursive doubling over nonblocking
        // messages, waited for by polling; the node's memory in node_window_.
        router_.emplace(
            rank_, size_, node_size < size_, LinkBackend::kMpi,
            static_cast<FlatCollectives&>(*this),
            [this](const void* send, std::size_t send_bytes, int to, void* recv,
                   std::size_t recv_bytes,
                   int from) { transfer(send, send_bytes, to, recv, recv_bytes, from); },
            [this] { poll(); }, /*doubling_polls=*/true);
        MpiNodeSetup steps(comm_, rank_, size_, world.hostname, node_window_);
        router_->set_up(settings.algo, settings.shm, steps);
      } catch (...) {
        MPI_Comm_free(&node);
        throw;
      }
      MPI_Comm_free(&node);
    } catch (...) {
      release();
      throw;
    }
  }
  ~MpiCommunicator() override {
    mailbox_.reset();  // its sends delivered first, its peers told as it closes
    release();
  }
  Mailbox* mailbox() override { return mailbox_.get(); }

  void broadcast(void* buf, std::size_t count, DType type, int root) override {
    const std::size_t elem = dtype_size(type);
    const std::size_t chunk = kChunkBytes / elem;
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min(chunk, count - done);
      check(MPI_Bcast(static_cast<char*>(buf) + done * elem, static_cast<int>(n), mpi_type(type),
                      root, comm_),
            "broadcast", "MPI_Bcast");
      done += n;
    }
  }

  void allgather(const void* in, void* out, std::size_t count, DType type) override {
    router_->allgather(in, out, count, type);
  }

  void barrier() override { check(MPI_Barrier(comm_), "barrier", "MPI_Barrier"); }
  std::string_view backend() const override { return "mpi"; }
  std::string_view allreduce_transport() const override {
    return router_->allreduce_transport(backend());
  }
  void abandon() noexcept override { abandoned_ = true; }

  bool allreduce_polls(std::size_t bytes, DType type) const override {
    // float16/bfloat16 travel widened to float.
    return router_->polls(is_16bit_float(type) ? bytes * 2 : bytes);
  }
  std::string missing_ranks() const override { return router_->missing_ranks(); }
  std::vector<PeerProcess> node_processes() const override { return node_processes_; }
  std::unique_ptr<PeerAlarm> take_peer_alarm() override { return std::move(alarm_); }
  bool peers_may_exit() const override { return mpi_finalized(); }

 protected:
  void do_allreduce(const void* in, void* out, std::size_t count, DType type,
                    ReduceOp op) override {
    if (is_16bit_float(type)) {
      allreduce_16bit(static_cast<const std::uint16_t*>(in), static_cast<std::uint16_t*>(out),
                      count, type == DType::kFloat16, op);
      return;
    }
    router_->allreduce(in, out, count, type, op);
  }

  bool do_allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op) override {
    return !is_16bit_float(type) && router_->allreduce_parts(parts, type, op);
  }

  void do_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                         ReduceOp op) override {
    if (is_16bit_float(type)) {
      // Widened whole: reduce-scatter's pieces are spread over the input, not contiguous.
      const std::size_t total = count * static_cast<std::size_t>(size_);
      if (wide_.size() < total) wide_.resize(total);
      const bool half = type == DType::kFloat16;
      widen16(static_cast<const std::uint16_t*>(in), wide_.data(), total, half);
      do_reduce_scatter(wide_.data(), wide_.data(), count, DType::kFloat32, sum_for_avg(op));
      if (op == ReduceOp::kAvg) divide_by(wide_.data(), count, DType::kFloat32, size_);
      narrow16(wide_.data(), static_cast<std::uint16_t*>(out), count, half);
      return;
    }
    router_->reduce_scatter(in, out, count, type, op);
  }

  // float16/bfloat16 are widened to float and averaged there, before rounding back: the sum of
  // the ranks' 16-bit values may not fit 16 bits where their average does.
  bool averages(DType type) const override { return is_16bit_float(type); }

 private:
  // MPI's own collectives, the router's last step (FlatCollectives).
  void flat_allgather(const void* in, void* out, std::size_t count, DType type) override {
    const std::size_t bytes = count * dtype_size(type);
    const int n = as_int(bytes, "allgather");
    const void* src = in == static_cast<const char*>(out) + rank_ * bytes ? MPI_IN_PLACE : in;
    check(MPI_Allgather(src, n, MPI_BYTE, out, n, MPI_BYTE, comm_), "allgather", "MPI_Allgather");
  }

  // Large messages in pieces (kChunkBytes, or as PieceTuner measures best).
  void flat_allreduce(const void* in, void* out, std::size_t count, DType type,
                      ReduceOp op) override {
    const std::size_t elem = dtype_size(type);
    const std::size_t bytes = count * elem;
    const bool tuned = bytes > kChunkBytes;
    const std::size_t chunk =
        std::max<std::size_t>(1, (tuned ? tuner_.piece(bytes) : kChunkBytes) / elem);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min(chunk, count - done);
      const void* piece_in = static_cast<const char*>(in) + done * elem;
      void* piece_out = static_cast<char*>(out) + done * elem;
      check(MPI_Allreduce(in == out ? MPI_IN_PLACE : piece_in, piece_out, static_cast<int>(n),
                          mpi_type(type), ops_.op_for(type, op), comm_),
            "allreduce", "MPI_Allreduce");
      done += n;
    }
    if (tuned) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      if (tuner_.record(bytes, took.count())) {
        // The slowest rank's view decides, and every rank decides the same.
        auto rates = tuner_.rates();
        check(MPI_Allreduce(MPI_IN_PLACE, rates.data(), static_cast<int>(rates.size()), MPI_DOUBLE,
                            MPI_MIN, comm_),
              "allreduce", "MPI_Allreduce");
        tuner_.decide(rates);
      }
    }
  }

  void flat_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                           ReduceOp op) override {
    const void* src = in == out ? MPI_IN_PLACE : in;
    check(MPI_Reduce_scatter_block(src, out, as_int(count, "reduce_scatter"), mpi_type(type),
                                   ops_.op_for(type, op), comm_),
          "reduce_scatter", "MPI_Reduce_scatter_block");
  }

  // Frees our communicator and finalizes MPI if we started it. Nothing to do once the
  // application has finalized MPI itself (it started MPI, so it may).
  void release() noexcept {
    if (abandoned_) return;  // a call is stuck inside MPI: freeing or finalizing would hang
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (router_) router_->release();
    node_window_.free();
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    ops_.free();
    if (owns_mpi_) MPI_Finalize();
    owns_mpi_ = false;
  }

  // RecursiveDoubling's transport: nonblocking messages, waited for by polling (a piece that
  // goes point to point is at most kMaxPieceBytes, so its length fits MPI's int).
  void transfer(const void* send, std::size_t send_bytes, int to, void* recv,
                std::size_t recv_bytes, int from) {
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (from >= 0) {
      check(MPI_Irecv(recv, static_cast<int>(recv_bytes), MPI_BYTE, from, kTag, comm_, &reqs[0]),
            "allreduce", "MPI_Irecv");
    }
    if (to >= 0) {
      check(MPI_Isend(send, static_cast<int>(send_bytes), MPI_BYTE, to, kTag, comm_, &reqs[1]),
            "allreduce", "MPI_Isend");
    }
    MPI_Status status[2];
    for (;;) {
      int done = 0;
      const int rc = MPI_Testall(2, reqs, &done, status);
      // A peer that passed a larger call: MPI refuses the message (truncation). Compared by
      // error class: MPICH's codes carry more than the class.
      if (rc != MPI_SUCCESS && from >= 0 &&
          (error_class(rc) == MPI_ERR_TRUNCATE ||
           (error_class(rc) == MPI_ERR_IN_STATUS &&
            error_class(status[0].MPI_ERROR) == MPI_ERR_TRUNCATE))) {
        different_size(from, recv_bytes, -1);
      }
      check(rc, "allreduce", "MPI_Testall");
      if (done) break;
      poll();
    }
    // A peer that passed a smaller call: MPI delivers the shorter message without a word, and the
    // rest of `recv` would be read as the peer's data. The count is in the status already.
    int got = 0;
    if (from >= 0 && MPI_Get_count(&status[0], MPI_BYTE, &got) == MPI_SUCCESS &&
        static_cast<std::size_t>(got) != recv_bytes) {
      different_size(from, recv_bytes, got);
    }
  }

  static int error_class(int code) {
    int cls = code;
    MPI_Error_class(code, &cls);
    return cls;
  }

  // The transfer's message from rank `from` was `got` bytes (-1: more than fit) where this rank's
  // call expected `expected`: the ranks passed different counts or element types to one
  // collective (comm/call_check.hpp). MPI's messages carry no more than their size, so this names
  // the sizes, not both calls (the TCP backend's headers do).
  [[noreturn]] void different_size(int from, std::size_t expected, int got) {
    throw Error(Error::Code::kInvalid,
                "dtrain: mpi: ranks passed different calls to one collective: rank " +
                    std::to_string(from) + "'s message was " +
                    (got < 0 ? "larger than the " + std::to_string(expected) + " bytes rank " +
                                   std::to_string(rank_) + " expected"
                             : std::to_string(got) + " bytes where rank " + std::to_string(rank_) +
                                   " expected " + std::to_string(expected)) +
                    "; every rank must pass the same number of elements, element type and "
                    "operation");
  }

  // float16/bfloat16: widened into a float buffer kept across calls, reduced, rounded back.
  void allreduce_16bit(const std::uint16_t* in, std::uint16_t* out, std::size_t count, bool half,
                       ReduceOp op) {
    const std::size_t chunk = kChunkBytes / sizeof(float);
    if (wide_.size() < std::min(chunk, count)) wide_.resize(std::min(chunk, count));
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min(chunk, count - done);
      widen16(in + done, wide_.data(), n, half);
      router_->allreduce(wide_.data(), wide_.data(), n, DType::kFloat32, sum_for_avg(op));
      if (op == ReduceOp::kAvg) divide_by(wide_.data(), n, DType::kFloat32, size_);
      narrow16(wide_.data(), out + done, n, half);
      done += n;
    }
  }

  static ReduceOp sum_for_avg(ReduceOp op) { return op == ReduceOp::kAvg ? ReduceOp::kSum : op; }

  static int as_int(std::size_t n, const char* op) {
    if (n > static_cast<std::size_t>(INT_MAX)) {
      throw Error(Error::Code::kInvalid,
                  std::string("dtrain: ") + op + ": message too large for MPI; expected at most " +
                      std::to_string(INT_MAX) + " bytes per rank, got " + std::to_string(n));
    }
    return static_cast<int>(n);
  }

  int rank_;
  int size_;
  std::vector<float> wide_;
  PieceTuner tuner_;
  // The paths (router.hpp); set once MPI is up. Its shared-memory paths live in node_window_,
  // freed after it releases them.
  std::optional<Router> router_;
  MpiNodeWindow node_window_;
  std::vector<PeerProcess> node_processes_;  // this node's ranks, this one included
  std::unique_ptr<PeerAlarm> alarm_;         // until the Engine takes it
  std::unique_ptr<Mailbox> mailbox_;         // point-to-point messages, on sockets of its own
  bool owns_mpi_ = false;
  bool abandoned_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MpiOps ops_;  // uint8's reductions
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(const WorldInfo& world, bool owns_mpi,
                                                    const Settings& settings) {
  return std::make_unique<MpiCommunicator>(world, owns_mpi, settings);
}

}  // namespace dtrain::runtime
