#include "mpijob_submit.hpp"

#include <filesystem>

#include "common/errors.hpp"
#include "plan/schedulers/scheduler.hpp"
#include "process.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {

SubmittedMpiJob submit_mpijob(const PlannedJob& job) {
  const plan::LaunchPlan& plan = job.plan;
  write_run_dir(plan, job.spec_text);
  const plan::Argv create = job.scheduler().submit_command(plan.run_dir + "/" + plan.script_name);
  auto forget = [&] {
    std::error_code ec;
    std::filesystem::remove_all(plan.run_dir, ec);
  };
  const Captured c = run_capturing(create);
  if (c.status == 127) {
    forget();
    throw UsageError(
        "dtrain: kubectl not found on PATH; expected kubectl configured for a cluster with the "
        "Kubeflow MPI Operator to submit to site " +
        plan.site + " (`dtrain plan` or `dtrain submit --dry-run` print the MPIJob without it)");
  }
  std::string command_line;
  for (const auto& w : create) command_line += (command_line.empty() ? "" : " ") + w;
  std::string output = c.err + c.out;
  while (!output.empty() && output.back() == '\n') output.pop_back();
  if (c.status != 0) {
    forget();
    throw plan::SubmitError("dtrain: `" + command_line + "` exited with status " +
                            std::to_string(c.status) + ":\n" +
                            (output.empty() ? "(no output)" : output));
  }
  std::string object;
  try {
    object = job.scheduler().parse_submitted(c.out);
  } catch (const plan::SubmitError& e) {
    // kubectl said it succeeded: the job exists, so its record stays.
    throw plan::SubmitError("dtrain: `" + command_line + "`: " + e.what() + "; the record of " +
                            "the job is in " + plan.run_dir);
  }
  return {object, plan.run_dir};
}

}  // namespace dtrain::cli
