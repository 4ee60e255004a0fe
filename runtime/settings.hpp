// Every DTRAIN_* variable libdtrain reads, parsed once by init() into one value that is passed
// down to the bootstraps, the communicators and the Engine (as gloo passes its options), so no
// backend reads the environment and a test builds a Settings from a map instead of calling
// setenv(). The launcher's own variables (PMIX_*, MASTER_ADDR, SLURM_*) describe the launch, not
// a choice of the user, and stay with the code that detects the launcher.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "affinity/self_apply.hpp"
#include "records/record_detail.hpp"
#include "timeout.hpp"

namespace dtrain::runtime {

// DTRAIN_ALGO: how allreduces, reduce_scatters and allgathers across nodes travel
// (comm/algorithms/hierarchy.hpp).
enum class AllreduceAlgo {
  kAuto,          // hierarchical where the node layout and the size pay for it, else flat
  kFlat,          // every rank alike: the backend's own allreduce
  kHierarchical,  // inside each node through shared memory, across nodes between peers
};

// DTRAIN_TRANSPORT: how the host collectives travel between processes (host_transport()).
enum class HostTransport { kAuto, kTcp, kMpi };

inline constexpr double kDefaultResourceInterval = 5.0;
// The shortest interval DTRAIN_RESOURCE_INTERVAL takes (besides 0, off) and the longest.
inline constexpr double kMinResourceInterval = 0.01;
inline constexpr double kMaxResourceInterval = 86400.0;

struct Settings {
  // DTRAIN_BOOTSTRAP: "" (choose automatically), "pmix", "mpi", "tcp", "env" or "single".
  std::string bootstrap;
  // DTRAIN_TIMEOUT (seconds, default 300): the deadline of every collective and rendezvous.
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
  // kCaller when the code that made the communicator replaced DTRAIN_TIMEOUT (ExternalBootstrap's
  // timeout, Comm::subgroup's): its errors then name that, not DTRAIN_TIMEOUT.
  TimeoutSource timeout_source = TimeoutSource::kEnvironment;
  Timeout deadline() const { return {timeout, timeout_source}; }
  // DTRAIN_AFFINITY: whether init() applies the rank's entry of the rank map itself.
  affinity::SelfApplyMode affinity = affinity::SelfApplyMode::kAuto;
  // DTRAIN_CPUSET set (by `dtrain bind` or the SPANK plugin, with the rest of the entry): the
  // launcher applied the entry already.
  bool launcher_applied = false;
  // DTRAIN_TOPOLOGY: the topology file init() solves the rank map on; "": this machine's.
  std::string topology;
  // DTRAIN_PIECE_BYTES: the MPI allreduce's piece size; 0 (unset): PieceTuner measures it.
  std::size_t piece_bytes = 0;
  // DTRAIN_SHM (default 1): allreduces may go through shared memory when every rank is on one
  // node; 0 keeps them on the backend's own messages.
  bool shm = true;
  // DTRAIN_SHM_MESSAGES (default 1): point-to-point messages between ranks of one node through
  // shared-memory rings (point_to_point/mailbox.hpp) instead of the sockets: 8 B in about 2x
  // MPI's time instead of 170x, and large messages faster than on the sockets
  // (docs/benchmarks.md); 0 keeps them on the sockets.
  bool shm_messages = true;
  // DTRAIN_ALGO (default auto): "flat" or "hierarchical" forces the allreduce, reduce_scatter and
  // allgather across nodes, for tests and benchmarks.
  AllreduceAlgo algo = AllreduceAlgo::kAuto;
  // DTRAIN_TRANSPORT (default auto): "tcp" (libdtrain's sockets), "mpi", or auto
  // (host_transport()).
  HostTransport transport = HostTransport::kAuto;
  // DTRAIN_FUSION_BYTES (default 64 MiB): FusedAllreduce's bucket size when the caller gives none.
  std::size_t fusion_bytes = std::size_t{64} << 20;
  // DTRAIN_PREEMPT_SIGNALS (default SIGUSR1 and SIGTERM): the signals a Preemption watches.
  std::vector<int> preempt_signals;
  // DTRAIN_RUN_DIR (set by `dtrain run-rank` and the SPANK plugin): where a Meter writes this
  // rank's records; "": not in a dtrain run, the Meter is off unless given a directory.
  std::string run_dir;
  // DTRAIN_ATTEMPT (set by `dtrain supervise`, default 0): which attempt of a restarted job this
  // is, counted from 0 (WorldInfo::attempt).
  int attempt = 0;
  // DTRAIN_RESOURCE_INTERVAL (seconds, default 5; 0 turns it off): how often a Meter records the
  // rank's CPU, memory and GPU use (docs/metrics.md, "type":"resource").
  double resource_interval = kDefaultResourceInterval;
  // DTRAIN_RECORDS ("intervals", the default, or "steps"; a job spec sets it under `env:`): how
  // much of each step a Meter writes (docs/metrics.md, "Detail").
  records::RecordDetail record_detail = records::kDefaultRecordDetail;
  // DTRAIN_ALARM_FD and DTRAIN_LIVE_FD (set by the rank's logger, `dtrain run-rank` or the
  // plugin): the descriptors of the peer alarm's socket (comm/lost_peers/peer_alarm.hpp) and of
  // the live status page (records/live_status.hpp) it handed the rank. The logger's, never a
  // user's: kept as text, and a value that names no such descriptor is ignored where it is used.
  std::optional<std::string> alarm_fd;
  std::optional<std::string> live_fd;
};

// The host collectives' transport for a job of several ranks: `bootstrap` is WorldInfo's ("pmix",
// "mpi", "tcp", "external": always the sockets), `mpi_initialized` whether MPI runs in this process
// already (the application's own MPI_Init, or the MPI bootstrap's). auto: MPI when it runs already
// (sharing it) or the MPI bootstrap found the job (its store needs MPI), else the sockets, which
// need no MPI at all: after PMIx or a torchrun-style launch, start-up is PMIx's or the TCP store's
// alone (MPI_Init cost 2.1 s of 2.4 at 64 ranks, and Open MPI 4.1.4's crashes there, ompi#10734).
// Throws Error (kInvalid) for a forced transport the launch cannot give.
HostTransport host_transport(HostTransport wanted, const std::string& bootstrap,
                             bool mpi_initialized);

// The value of an environment variable, nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// Parses every variable through `env`, in the order init() used them before this value existed:
// BOOTSTRAP, TIMEOUT, AFFINITY, PIECE_BYTES, SHM, ALGO, TRANSPORT, FUSION_BYTES, PREEMPT_SIGNALS,
// then RUN_DIR, ATTEMPT, RESOURCE_INTERVAL, RECORDS, ALARM_FD, LIVE_FD.
// An unset or empty variable takes its default (DTRAIN_PREEMPT_SIGNALS: unset only). Throws Error
// (kInvalid) naming the first bad variable and its value.
Settings parse_settings(const EnvLookup& env);
// parse_settings over this process's environment (getenv).
Settings settings_from_environment();

}  // namespace dtrain::runtime
