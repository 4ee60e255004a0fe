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
  std::string default_queue;
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
