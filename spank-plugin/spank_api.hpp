// Thin typed wrappers over the SPANK calls the plugin makes (spank_get_item, spank_getenv,
// spank_setenv, spank_option_register, slurm_error...) and the symbols Slurm looks a plugin up by,
// so the context files deal in std::string and exceptions and only spank_api.cpp sees
// <slurm/spank.h> (docs/architecture.md rule 3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "launch/launcher_env.hpp"

struct spank_handle;  // spank_t is `struct spank_handle*` (slurm/spank.h)

namespace dtrain::spank {

enum class Context { kLocal, kRemote, kAllocator, kSlurmd, kJobScript, kOther };

// spank_context() as a value.
Context current_context();
// spank_context() as Slurm numbers it (S_CTX_*), for the daemon log.
int raw_context();

// What SPANK calls when an option is given: `val` is the option's OptionId.
using OptionCallback = int (*)(int val, const char* optarg, int remote);

// A SPANK call that failed where it must not; the message names the call and Slurm's error text.
class SpankCallError : public Failure {
 public:
  using Failure::Failure;
};

class Spank {
 public:
  explicit Spank(spank_handle* handle) : handle_(handle) {}

  // Registers every option of options.hpp's table (spank_option_register), each calling
  // `callback`. Returns the name of the first option SPANK refused, "" when it took them all.
  std::string register_options(OptionCallback callback) const;

  // The job's environment (S_JOB_ENV; remote context), as a value for the pure functions.
  launch::Environment job_environment() const;
  void setenv(const std::string& name, const std::string& value) const;

  std::uint32_t job_id() const;
  std::uint32_t step_id() const;
  std::uint32_t node_id() const;
  std::uint32_t local_task_count() const;
  std::uint32_t total_task_count() const;
  int task_id() const;                   // local id; task callbacks only
  std::uint32_t task_global_id() const;  // task callbacks only
  // The task's command line (S_JOB_ARGV; remote context); empty when Slurm does not say.
  std::vector<std::string> job_argv() const;

  // The batch script, the extern step and salloc's interactive step run no training tasks: an
  // #SBATCH --dtrain is meant for the srun steps inside the job.
  bool is_job_step() const;

 private:
  spank_handle* handle_;
};

// Slurm's logging: errors reach the user's srun/sbatch stderr; debug only the daemon logs. (Never
// slurm_info in srun/sbatch: Torque's qsub parses sbatch's output for the job id.)
void log_error(const std::string& message);
void log_debug(const std::string& message);

}  // namespace dtrain::spank
