// A site profile: what dtrain knows about a cluster (its scheduler, launcher, node shape, the
// fields it requires and the environment it recommends). Profiles are data: the built-in ones are
// templates/sites/*.yaml (compiled into dtrain), and a user's own profile is a file with the same
// fields, named by path in the spec's `site:`.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtrain::plan {

// One row of a site's published queue limits (a profile's `queues`): a job in `queue` must have
// from min_nodes to max_nodes nodes and a walltime from min_walltime to max_walltime. A routing
// queue whose destinations differ (Polaris' prod: small, medium, large) has one row per
// destination, and a job fits the queue when it fits any of them.
struct QueueRule {
  std::string queue;
  int min_nodes = 1;
  int max_nodes = 0;      // 0: no limit
  long min_walltime = 0;  // seconds
  long max_walltime = 0;  // seconds; 0: no limit
  std::string note;       // what the row is ("routed to small"), for messages; may be ""
};

struct SiteProfile {
  std::string name;
  std::string description;
  // The name of a registered scheduler adapter (plan/schedulers/scheduler.hpp: scheduler_of()
  // finds it), which does everything scheduler-specific: the set of schedulers stays open.
  std::string scheduler = "local";
  std::string launcher;    // srun | mpiexec | mpirun (kubernetes: mpirun, Open MPI)
  std::string srun_mpi;    // srun --mpi= value (slurm)
  std::string constraint;  // sbatch -C (slurm)
  std::string select;      // extra resources of each PBS Pro select chunk ("system=polaris")
  std::string place;       // PBS Pro -l place=
  int gpus_per_node = 0;
  int cores_per_node = 0;
  int threads_per_core = 1;
  std::vector<std::string> required;  // spec fields a job on this site must set
  // The queue a job without `queue` goes to: the first of these whose `queues` rows fit the job
  // (a queue without rows fits every job).
  std::vector<std::string> default_queues;
  std::vector<QueueRule> queues;
  // Directories `module use` adds before the spec's `module load` (Polaris: /soft/modulefiles).
  std::vector<std::string> module_paths;
  // Directories put before LD_LIBRARY_PATH with the recommended environment (and dropped with it
  // by `site_env: false`): NCCL finds its network plugin there.
  std::vector<std::string> library_path;
  std::vector<std::string> default_filesystems;
  std::vector<std::pair<std::string, std::string>> env;  // recommended; `site_env: false` drops it
  std::string topology;  // an lstopo XML of one node, for `dtrain plan` off the cluster
};

inline constexpr std::size_t kMaxProfileBytes = 256 * 1024;

// Throws SpecError with every problem of the file, like parse_job_spec.
SiteProfile parse_site_profile(std::string_view text, const std::string& source_name);

// The known field names, in documentation order (docs/spec.md, "Site profiles").
const std::vector<std::string>& site_profile_fields();

}  // namespace dtrain::plan
