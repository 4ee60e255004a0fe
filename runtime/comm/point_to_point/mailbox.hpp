// Point-to-point messages of one communicator: send and receive of host buffers with a tag,
// receive from any source, over TCP sockets between processes and a copy within one.
//
// Why its own thread (one per communicator, started by the first message, none before): a
// pipeline's stages send and receive at once (1F1B: isend to the next stage, irecv from it), and
// a message larger than the kernel's socket buffers completes only while its receiver reads. The
// collectives' progress thread runs one call at a time, so two ranks that both sent first would
// each wait for the other; here one thread moves every connection's bytes as they can move.
//
// Connections (why per peer, and which): the rank that sends opens one connection to the
// receiver's listener on its first message to it and keeps it, one way only. So a rank holds one
// per peer it sends to and one per peer that sends to it: a pipeline stage 2-4, never the full
// mesh (each listener's port is in the TCP backend's address table, tcp_peers.hpp).
//
// A lost peer is seen as its connection's end, here or, for a rank never connected to, where a
// receive from it opens one: a receive from a rank that has not connected to this one within
// kWatchAfter opens the connection a send to that rank would (the same one, kept for its sends),
// so that the rank's end closes it. Without it, a survivor blocked in a receive from a killed rank
// that had never sent to it (a pipeline stage, an alltoallv) waited for its deadline: nothing it
// held could close (the launcher's other ranks see a process end; this one sees only sockets).
// Why acceptable per peer: it opens only for receives that wait that long for a rank never heard
// from, at most one per such rank, as a send to it would; a gather's root whose ranks are late
// holds at most twice the connections it holds anyway. Every listener exists before its address
// is published, so a refused connection means the rank is gone: no grace is needed for it to
// start listening. Its end fails the receives from that rank, but not while a connection from it
// may still bring a message it sent whole before it went (settle()).
//
// Within a node (ranks whose addresses name the same node) the messages go instead through a
// shared-memory ring per pair and direction (transport/shm/shm_ring.hpp), made by the first send
// and named to the receiver in the connection's hello; the connection stays, to bring wake-ups
// and to tell when the peer is gone, so matching, deadlines and errors are those of the sockets.
// The ring is read by whichever thread gets there first: a caller waiting for a message spins
// reading it (Progress, engine.hpp: no thread switch, no system call), the mailbox's thread
// otherwise, asleep in poll until the writer sends it a byte. Why a ring per pair is acceptable:
// rings exist only for pairs that exchanged a message (a pipeline stage holds 2), each is
// ShmRing::kBytes, and a rank makes at most kMaxRings (then its sockets carry the rest), so a
// host of 256 ranks holds at most 256 x 16 x 64 KiB = 256 MiB in the worst all-to-all.
//
// Messages that arrive before their receive are kept (up to kUnexpectedBudget bytes in all, then
// their connection is read no further until a receive takes its message: the sender's socket
// fills and its send waits, as MPI's rendezvous protocol would); a large one only after it waited
// kParkFor for its receive, unread. A send completes once its bytes are with the kernel: its
// buffer may be reused, the receiver may not have them yet.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/call_check.hpp"
#include "comm/engine.hpp"
#include "comm/point_to_point/group_ids.hpp"
#include "comm/point_to_point/message_matching.hpp"
#include "net/socket.hpp"
#include "timeout.hpp"

namespace dtrain::runtime {

// Where a rank's mailbox listens.
struct MailboxAddress {
  std::string host;
  int port = -1;
  // What a connection to it brings in its hello (wire_format.hpp): a connection of another
  // process, to a port this listener took over, is refused (net/random_token.hpp).
  std::uint64_t key = 0;
  std::string node;  // for messages: "rank 3 (on node7)"
};

class Mailbox : private Progress {
 public:
  // Unclaimed messages are kept up to this many bytes in all (then backpressure, above).
  static constexpr std::size_t kUnexpectedBudget = std::size_t{64} << 20;
  // The most shared-memory rings this rank writes (above).
  static constexpr int kMaxRings = 16;
  // How long a receive waits for a rank never heard from before it connects to it (above): most
  // messages come well within it, and those that do need no connection of their own.
  static constexpr std::chrono::milliseconds kWatchAfter{500};
  // A large message that comes before its receive is parked this long, unread: within a node in
  // its sender's memory (a message larger than a ring), across nodes on its connection (larger
  // than kParkAbove: read no further, its bytes wait in the kernels' buffers and its sender's
  // send waits, as MPI's rendezvous protocol has it). A receive posted meanwhile reads it once,
  // straight into its buffer. After it (or at once when a receive from that rank that it does
  // not match is posted: it holds back that rank's later messages) it is read into a kept buffer,
  // so that a sender whose receiver sends first is not held (both ranks sending before they
  // receive). Why: keeping it costs a buffer of its size allocated, zeroed and faulted in, and a
  // second copy. Within a node a 64 MiB ping-pong took 60x a memcpy; across nodes a quarter of an
  // alltoall's 8 MiB blocks came a few milliseconds before their receives (ranks leave the call
  // before it at different times), and 8 nodes' alltoall ran at 0.49 of the link's limit, 0.90
  // parked (docs/benchmarks.md). A parked connection is not polled: its peer's end is seen when
  // the park ends (this long later, or, over the kept budget, when its receive comes).
  static constexpr std::chrono::milliseconds kParkFor{10};
  // Across nodes, messages up to this size that come before their receive are kept at once: a
  // copy that costs little, and their sends complete without waiting for the receiver.
  static constexpr std::size_t kParkAbove = std::size_t{64} << 10;

  // `addresses`: every rank's listener, by rank (empty for a one-rank job); `listener`: this
  // rank's, listening at addresses[rank]. `timeout`: a message's deadline unless its call gives
  // one (a subgroup's, Comm::subgroup); `source`: where it came from, for the errors.
  // `rings`: messages to ranks of this node may go through shared-memory rings (above;
  // DTRAIN_SHM_MESSAGES, on by default; a reader that goes with its ring full is named by the
  // waiting sender from its connection's end, as on a socket).
  Mailbox(int rank, int size, std::vector<MailboxAddress> addresses, net::Socket listener,
          std::chrono::milliseconds timeout, TimeoutSource source = TimeoutSource::kEnvironment,
          bool rings = false);
  // Waits (up to the timeout) for the sends already handed to it to leave, then closes every
  // connection; receives still posted fail.
  ~Mailbox();
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Start a message; the returned Pending completes (or fails, naming the peer) on the mailbox's
  // thread. `bytes` from `buf` to rank `dst` / into `buf` from rank `src` (kAnySource: any; the
  // Pending's `source` tells which). Both must stay valid until it completes. A message whose size
  // differs from its receive's fails the receive, naming both sizes and both ranks.
  // `timeout`: this message's deadline (its communicator's); nullopt: the mailbox's.
  // `group_of` (a sub-communicator's, message_space.hpp): its errors name the ranks in both
  // numberings (rank_name), and a receive's sender is told in the group's.
  // `call`: the collective's call header (call_check.hpp), sent in the message's and compared
  // with its receive's: a receive of another call (type, operation, root, count) fails naming
  // both ranks' calls. A user's message leaves it zero.
  std::shared_ptr<Pending> send(const void* buf, std::size_t bytes, int dst, std::int64_t tag,
                                std::shared_ptr<const std::vector<int>> group_of = nullptr,
                                std::optional<Timeout> timeout = std::nullopt,
                                const CallHeader& call = {});
  std::shared_ptr<Pending> receive(void* buf, std::size_t bytes, int src, std::int64_t tag,
                                   std::shared_ptr<const std::vector<int>> group_of = nullptr,
                                   std::optional<Timeout> timeout = std::nullopt,
                                   const CallHeader& call = {});
  // Blocks until `message` (one of the above) completes, or its deadline passes (then it fails,
  // named); rethrows its error. For libdtrain's own schedules on the progress thread: a user's
  // wait goes through Engine::wait, which also runs the interrupt check.
  static void wait(Pending& message);

  // Sub-communicator ids (group_ids.hpp), shared by every communicator on this mailbox.
  GroupIds& group_ids() { return group_ids_; }

  // Rank `peer` is gone (the engine's peer watch or alarm said so; `text` names it): what waits
  // for it fails at once with `text`, and so does whatever is later sent to or received from it.
  void peer_lost(int peer, const std::string& text);

 private:
  struct Op;
  struct Incoming;
  struct Outgoing;
  struct Unclaimed;
  // A receive from a rank never heard from, and when it connects to that rank (kWatchAfter).
  struct Watch {
    std::chrono::steady_clock::time_point at;
    std::weak_ptr<Op> receive;
  };

  // Progress (engine.hpp): a waiter moves the rings' bytes.
  void begin() override;
  bool step() override;
  void end(bool done) override;
  bool mid_message() const override;

  void loop();
  void start_thread();  // with mutex_ held
  void wake();
  // With mutex_ held: completes `op` (error empty: success).
  void finish(Op& op, const std::string& error, Error::Code code = Error::Code::kComm);
  void deliver_local(const std::shared_ptr<Op>& send);
  void claim(const std::shared_ptr<Op>& receive, std::size_t index);
  void accept_new();
  void read(Incoming& in);
  bool read_stream(Incoming& in);  // a socket's or ring's bytes as they come; whether any did
  // read_stream's pieces (mailbox_io.cpp): where the next bytes go, reading them, and the state
  // after a hello, ring name, header or address.
  struct Span {
    char* into = nullptr;
    std::size_t bytes = 0;
    bool discards = false;  // bytes nobody takes
  };
  Span next_span(Incoming& in, std::size_t room);
  ssize_t read_some(Incoming& in, const Span& to);
  std::optional<bool> framing_done(Incoming& in);
  bool read_header(Incoming& in);
  void header_arrived(Incoming& in);
  void payload_done(Incoming& in);
  void write(Outgoing& out);
  // What the peer sent back on a connection this rank writes to: the ring's wake-ups; on a plain
  // connection nothing ever comes, so only its end (which drops it).
  void read_back(Outgoing& out);
  // The loop's: connects to the ranks that receives due in watch_due_ still wait for.
  void open_watches();
  // How long the loop may sleep, at most `ms`, before a watch is due.
  int watch_sleep_ms(int ms) const;
  // Parked messages (kParkFor), in their senders' memory or on their connections: kept once due, or
  // once a receive from their sender waits behind them; how long the loop may sleep, at most `ms`,
  // before one is due.
  void keep_parked();
  int park_sleep_ms(int ms) const;
  // Within a node (mailbox_rings.cpp): the rings' side of reading and writing.
  bool read_ring(Incoming& in);  // whether bytes moved
  // A small message whose header and bytes are whole in the ring's next record, taken by a
  // posted receive of its size and call: copied into it in one step, rather than read_stream's
  // pieces (the header into the connection's state, then the bytes, each through its states:
  // a tenth of an 8 B message's time). Anything else (nobody waits for it yet, larger, a size
  // or call that differs, which read_stream names) is left to read_stream. Whether one was.
  bool take_whole(Incoming& in);
  bool write_ring(Outgoing& out);
  // A send whose ring is idle (its connection's hello sent, nothing queued) and has room for it
  // whole: written now, in the caller's call; whether it was. Such a send needs no Op: nothing
  // is left to wait for (an 8 B message's Op, made, counted and freed, was a tenth of its time).
  bool send_now(Outgoing& out, const void* buf, std::size_t bytes, std::int64_t tag,
                const CallHeader& call);
  // The front send, read by its receiver from this process's memory, completes once the
  // receiver acknowledged it in the ring: also when its connection ends or its process is lost
  // just after (it may take the message and end at once, and its acknowledgement and its end
  // may come in one poll), as a ring's bytes written before their writer went are read all the
  // same. Whether it completed.
  bool complete_taken(Outgoing& out);
  bool open_ring(Incoming& in);
  bool move_rings();  // every ring, both ways; whether bytes moved
  // Before the loop sleeps: how long it may (0: a ring still has work).
  int ring_sleep_ms();
  void raise_flags();  // nobody watches the rings: writers and readers wake this side
  void lower_flags();
  bool same_node(int rank) const;
  void drop_incoming(Incoming& in, const std::string& why);
  void drop_outgoing(Outgoing& out, const std::string& why);
  void fail_receives_from(int peer);  // with mutex_ held, gone_[peer] set: each with gone_text
  // With mutex_ held, `peer` gone (gone_): its receives fail now, unless a connection may still
  // bring a message it sent whole before it went: its own (whose end then fails them), or one
  // whose hello is not read yet (it may be its own; settled again once read, unsettled_).
  void settle(int peer);
  void expire(const std::shared_ptr<Op>& op);
  // `op`'s deadline (its timeout from now), and the expiry its waiter calls past it.
  void set_deadline(const std::shared_ptr<Op>& op);
  // "rank 3 (on node7)", or in a group (`group_of`): "group rank 1 (world rank 3, on node7)".
  std::string who(int rank, const std::shared_ptr<const std::vector<int>>& group_of) const;
  std::string describe(const Op& op) const;
  // Why a message of `bytes` under `call` from `source` (world rank) cannot fill `receive`: its
  // call differs (both calls named), or its size; "" when it can.
  std::string mismatch(const Op& receive, std::uint64_t bytes, const CallHeader& call,
                       int source) const;
  // Why `op`'s peer is gone, naming it in `op`'s numbering (gone_).
  std::string gone_text(const Op& op) const;

  const int rank_;
  const int size_;
  const std::vector<MailboxAddress> addresses_;
  net::Socket listener_;
  const Timeout timeout_;
  net::Socket wake_;  // an eventfd: user threads wake the loop's poll

  std::mutex mutex_;  // guards everything below; held by the loop while it moves bytes
  bool stop_ = false;
  std::deque<std::shared_ptr<Op>> posted_;  // receives not yet matched, in the order posted
  // The last receive a ring's record completed in one step (take_whole), kept until the next
  // receive is posted: its waiter's release then frees nothing, on the way to its next send.
  std::shared_ptr<Op> retired_;
  std::deque<std::shared_ptr<Unclaimed>> unclaimed_;  // messages that came before their receive
  // Those of unclaimed_ parked for kParkFor (keep_after set; claimed or dropped ones until the
  // next keep_parked): what keep_parked looks at on every receive, rather than every unclaimed
  // message (a stream of small messages ahead of their receives holds up to a ring's thousand,
  // and a look at each per receive made such a stream 7x slower than Open MPI's).
  std::vector<std::shared_ptr<Unclaimed>> parked_;
  std::size_t unclaimed_bytes_ = 0;
  std::vector<std::unique_ptr<Incoming>> incoming_;
  std::vector<std::unique_ptr<Outgoing>> outgoing_;  // by destination, null until the first send
  // Those of outgoing_ made with a ring (at most kMaxRings): what a waiter polls, rather than
  // outgoing_'s one entry per rank of the communicator.
  std::vector<Outgoing*> ring_writers_;
  // Why a rank is gone: told after its name (who(): each message names it in its own
  // communicator's numbering), or `whole`, a sentence that names it itself (peer_lost's).
  struct Gone {
    std::string why;  // "": it is not gone
    bool whole = false;
  };
  std::vector<Gone> gone_;        // by rank
  std::vector<bool> heard_from_;  // by rank: it connected to this one (its hello was read)
  std::deque<Watch> watch_due_;   // in the order due (each kWatchAfter after its receive)
  std::vector<int> unsettled_;    // gone ranks whose receives settle() could not fail yet
  const bool
      node_peers_;  // rings allowed and some other rank is on this node (they may carry messages)
  // This node has a core for each of the communicator's ranks on it: a message larger than a ring
  // streams through it, both ranks copying at once (64 MiB one way at 0.9-1.1 of a memcpy on the
  // VM of docs/benchmarks.md, 128 KiB-64 MiB in 0.4-0.5 of the time of the reader's
  // process_vm_readv). Without (more ranks than cores), the reader copies it alone from the
  // sender's memory: streaming needs both ranks running at once, and under load it was slower.
  const bool cores_for_all_;
  int rings_ = 0;  // rings made for sending (at most kMaxRings)
  // These three are changed under mutex_, but read without it by a caller that begins or ends a
  // spin while the flags are down (begin(), end(): no lock per message in a burst). A race there
  // can only leave the flags up while a caller spins: peers then wake this side needlessly,
  // never the reverse (flags are lowered only under mutex_).
  std::atomic<int> watchers_{0};  // callers spinning on the rings (Progress)
  // A message streams through a ring now, written by one rank while the other reads it (set by
  // move_rings; read by a spinning caller without the mutex, so a stale value only lengthens or
  // shortens one spin).
  std::atomic<bool> streaming_{false};
  std::atomic<bool> flags_up_{true};  // the rings' waiting flags are raised (raise_flags)
  // When a flag last went up: the loop looks at the rings again ShmRing::kRecheckAfter later.
  std::chrono::steady_clock::time_point flags_raised_at_;
  // Messages completed while their callers spun: for a millisecond after the loop sees the count
  // move, the flags stay down, since a caller's next call usually follows at once (a ping-pong,
  // a pipeline's next micro-batch), and a peer's write then costs no system call to wake this
  // side. A count, not a time: a clock read per message cost a tenth of an 8 B message's time on
  // a VM (docs/benchmarks.md); the loop reads the clock instead.
  std::atomic<std::uint64_t> watched_count_{0};
  std::uint64_t watched_seen_ = 0;                    // the loop's last look at it
  std::chrono::steady_clock::time_point watched_at_;  // and when it last saw it move
  std::thread thread_;
  GroupIds group_ids_;
};

}  // namespace dtrain::runtime
