// Noticing at once that the process of another rank on this node has ended.
//
// Under an MPI launcher a rank killed by a signal takes the job down within about a second:
// mpirun (Open MPI 4.1) sends the others SIGCONT at once and SIGTERM one second later, and
// slurmstepd (srun --mpi=pmix, Slurm 22.05) cancels the step and SIGKILLs them after the same
// second. Neither tells the survivors through PMIx first (no event reaches a registered handler;
// with `mpirun --enable-recovery` its server fails to send one: BAD-PARAM), and a survivor waiting
// in MPI learns nothing from MPI before it is killed. So the user would read only the launcher's
// banner. A pidfd (Linux 5.3) turns readable the moment its process ends, so a thread polling the
// pidfds of the ranks on this node learns of a death within milliseconds (10-20 ms measured with 4
// ranks on 2 cores), well inside that second. Ranks on other nodes cannot be watched: the ranks
// that see one end pass it on through the peer alarm (peer_alarm.hpp), whose socket the same
// thread polls.
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace dtrain::runtime {

class PeerAlarm;

// One rank's process as the others on its node need it to watch and name it.
struct PeerProcess {
  int rank = -1;
  std::int64_t pid = 0;
  // Which kernel and pid namespace `pid` belongs to (boot id, namespace device and inode): a pid
  // means that process only to processes with the same key. Empty when unknown: never watched.
  std::string node;
  // Its host as the job knows it (PMIX_HOSTNAME, MPI's processor name). Not exchanged: a watched
  // process runs on the watcher's own node, so each rank fills in its own host name.
  std::string host;
};

// Whether process `pid`, ended and not yet reaped (a zombie: its logger, records/output_tee.hpp,
// keeps a failed rank one for a moment), exited with a failure status or died of SIGPIPE: what
// Open MPI 4.1 does to a rank whose TCP connection to a lost rank breaks (it aborts the process,
// exit status 255, or the write raises SIGPIPE), within milliseconds, often before the lost
// rank's own end is visible on its node. False when it cannot tell (reaped already, as slurmstepd
// and mpirun's daemons do at once, or killed by another signal).
bool ended_as_victim(std::int64_t pid);

// This process, as rank `rank` on `host`.
PeerProcess this_process(int rank, const std::string& host);

// Fixed-size records of rank, pid and node key, so the ranks of a node can exchange them with one
// allgather of kPeerRecordBytes each.
constexpr std::size_t kPeerRecordBytes = 128;
std::string encode_peer_record(const PeerProcess& p);
// `record`: kPeerRecordBytes from encode_peer_record. A malformed one gives an empty node key
// (never watched).
PeerProcess decode_peer_record(const char* record, const std::string& host);

class PeerWatch {
 public:
  // Called once, on the watch's own thread, for the first loss: a watched process that ended
  // (`told_by` -1), or a rank that, as the alarm says, rank `told_by` saw end on its node (`lost`
  // then has only its rank and host). Returns whether it reported the loss: only then is a loss
  // seen here passed on through the alarm. A callback that reports calls `announce` first, before
  // its own failure can end this process: the other ranks then hear this rank's view (the rank
  // that ended first) before they can see this rank end too and blame it.
  using OnLost = std::function<bool(const PeerProcess& lost, int told_by,
                                    const std::function<void()>& announce)>;

  // Watches every process of `peers` (other than `self`) that shares `self`'s node key; a process
  // that cannot be opened (already gone) counts as ended at once. Watches no process where the
  // kernel has no pidfds. With `alarm`, also listens for the other ranks' alarms and sends one
  // (kAlarmSends times) for a loss seen here. An alarm that has arrived is read before the
  // watched processes: it names the rank its sender saw end first, while a process seen ended now
  // may be a rank that failed because of that one and exited since.
  PeerWatch(const std::vector<PeerProcess>& peers, const PeerProcess& self, OnLost on_lost,
            std::unique_ptr<PeerAlarm> alarm = nullptr);
  // Stops the thread; once it returns, `on_lost` is not running and will not be called.
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // How many processes are watched (for tests).
  std::size_t watched() const { return watched_.size(); }

  // This rank is leaving the job without finalizing (Context::abort: an error): tells every rank
  // the alarm reaches, as a loss of this rank that it reports itself, kAlarmSends times. Returns
  // after the last send (about 10 ms); does nothing without an alarm. The ranks of this node that
  // the alarm cannot reach still see the process end.
  void leave() const noexcept;
  // The same, sent when the process exits (std::atexit), for a Context destroyed by an exception
  // on its way to a handler: the handler prints the error after the Context is gone, and the
  // others must not end the job (the launcher kills this rank at their exit) before it has.
  // Stops the watch: nothing is reported here any more.
  void leave_at_exit() noexcept;

  // A datagram may be dropped (a full socket buffer on either side): each alarm goes this many
  // times, kAlarmGapMs apart, and the receivers report only the first that arrives.
  static constexpr int kAlarmSends = 3;
  static constexpr int kAlarmGapMs = 5;
  // How long a process of this node that ended as a victim (ended_as_victim) is not reported,
  // waiting for the alarm that names the rank lost first: its logger keeps it a zombie for
  // records::kAlarmWaitMs (300 ms), and the launcher ends the job about a second after the loss.
  static constexpr int kVictimGraceMs = 250;

 private:
  void loop();
  // With an alarm of this job waiting (poll set `fds`, alarm at 1): reports it; true when it did.
  bool reported_alarm(const std::vector<pollfd>& fds);
  // Waits up to kVictimGraceMs for an alarm, or for another process here that ended otherwise,
  // and reports that; else `victim`. `fds`: loop()'s poll set.
  void victim_grace(std::vector<pollfd>& fds, const PeerProcess& victim);
  // Fills watched_ with the processes of `peers` that share `self`'s node key.
  void open_pidfds(const std::vector<PeerProcess>& peers, const PeerProcess& self);
  // Reports `lost`, seen ending here, and passes it on when it was reported.
  void lost_here(const PeerProcess& lost);
  void close_pidfds() noexcept;
  void close_all() noexcept;
  void stop_thread() noexcept;

  struct Watched {
    PeerProcess process;
    int fd;  // -1: it had already ended when the watch began
  };
  std::vector<Watched> watched_;
  int self_rank_;
  std::string self_host_;
  OnLost on_lost_;
  std::unique_ptr<PeerAlarm> alarm_;
  int stop_fd_ = -1;  // an eventfd that ends the thread
  std::thread thread_;
};

}  // namespace dtrain::runtime
