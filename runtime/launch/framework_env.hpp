// The rendezvous environment each framework reads to form its process group, computed per rank
// from where the rank sits in the job. Pure, so `dtrain bind`, the SPANK plugin and the tests
// produce the same text for the same placement; the adapter at the bottom reads the launcher's
// and scheduler's variables into a placement.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "launch/launcher_env.hpp"

namespace dtrain::launch {

enum class Framework {
  kNone,        // nothing beyond the rank map
  kTorch,       // torch.distributed env:// (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, ...)
  kTensorflow,  // TF_CONFIG for MultiWorkerMirroredStrategy
  kJax,         // jax.distributed.initialize(): coordinator, process count and id
  kHorovod,     // runs under the site's MPI launcher: nothing extra
};

// An unknown framework word (the spec's framework:, --framework, --dtrain-framework): bad input.
class FrameworkError : public InputError {
 public:
  using InputError::InputError;
};

// Throws FrameworkError naming `what` and the accepted words, like the affinity policy parsers.
Framework parse_framework(std::string_view text, std::string_view what = "framework");
std::string_view to_string(Framework f);
const std::vector<std::string_view>& framework_names();

// Where one rank sits in the job.
struct JobPlacement {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  int node_rank = 0;               // index of this rank's node in `hosts`
  std::vector<std::string> hosts;  // the job's nodes in node order; hosts[0] is the coordinator
  std::string job_id;              // the scheduler's job id ("" for an unscheduled run)
};

// The coordinator port of a job (torch MASTER_PORT, the jax coordinator): derived from the job id
// so that two jobs sharing a node do not collide, as enroot does: 61000 + id % 4536, above Linux's
// default ephemeral range (32768-60999), so no client socket already holds it. A non-numeric id
// is hashed; an empty id (an unscheduled run) gets torchrun's default 29500.
int rendezvous_port(std::string_view job_id);

// The port of TensorFlow worker `local_rank` on its host: every rank of a node needs its own, so
// jobs get disjoint blocks of 128 in [20000, 32288), below the ephemeral range. Throws
// std::invalid_argument for a local rank outside [0, 128).
int tensorflow_worker_port(std::string_view job_id, int local_rank);

// Variables for `framework` at `placement` (empty for kNone and kHorovod). torch: MASTER_ADDR,
// MASTER_PORT, RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, NODE_RANK, GROUP_RANK.
// tensorflow: TF_CONFIG, one worker per rank at host:tensorflow_worker_port(). jax:
// JAX_COORDINATOR_ADDRESS (host:port), JAX_NUM_PROCESSES, JAX_PROCESS_ID, JAX_LOCAL_PROCESS_ID.
// Throws std::invalid_argument when the placement is inconsistent (a bug in the caller).
// A rendezvous address or port the user set in the environment the rank inherits (`inherited`:
// the spec's or site's env, an export before srun) wins: users behind firewalls need fixed ports.
// Those variables (user_settable_rendezvous_variables) are left out of the result, so the user's
// value reaches the rank unchanged; the rank-position variables are always computed.
Environment framework_environment(Framework framework, const JobPlacement& placement,
                                  const Environment& inherited = {});

// MASTER_ADDR, MASTER_PORT and JAX_COORDINATOR_ADDRESS: the same on every rank, so a value the
// user set is as right as dtrain's choice.
const std::vector<std::string_view>& user_settable_rendezvous_variables();

// The placement of this process from the launcher's variables (`launcher`, from detect_launcher)
// and the scheduler's host list: SLURM_STEP_NODELIST / SLURM_JOB_NODELIST, DTRAIN_HOSTS (a
// comma-separated list the job script exports from PBS_NODEFILE or COBALT_NODEFILE), else this
// host alone. `hostname` is this machine's name, used to find the node rank when the launcher does
// not say. Throws LauncherEnvError with the variable named when the host list and the launcher
// disagree (e.g. a node rank past the end of the list).
JobPlacement placement_from_environment(const Environment& env, const LauncherInfo& launcher,
                                        std::string_view hostname);

}  // namespace dtrain::launch
