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
// ranks on 2 cores), well inside that second. Ranks on other nodes are not watched: only their
// own node's ranks can tell, and those report it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace dtrain::runtime {

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
  // Called once, on the watch's own thread, for the first watched process that ends.
  using OnLost = std::function<void(const PeerProcess& lost)>;

  // Watches every process of `peers` (other than `self`) that shares `self`'s node key; a process
  // that cannot be opened (already gone) counts as ended at once. Watches nothing where the
  // kernel has no pidfds.
  PeerWatch(const std::vector<PeerProcess>& peers, const PeerProcess& self, OnLost on_lost);
  // Stops the thread; once it returns, `on_lost` is not running and will not be called.
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // How many processes are watched (for tests).
  std::size_t watched() const { return watched_.size(); }

 private:
  void loop();
  void close_all() noexcept;

  struct Watched {
    PeerProcess process;
    int fd;  // -1: it had already ended when the watch began
  };
  std::vector<Watched> watched_;
  OnLost on_lost_;
  int stop_fd_ = -1;  // an eventfd that ends the thread
  std::thread thread_;
};

}  // namespace dtrain::runtime
