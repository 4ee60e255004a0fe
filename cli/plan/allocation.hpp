// The allocation a shell already holds (`salloc`, `qsub -I`, a batch script), from its environment:
// where `dtrain run` (and `dtrain submit --here`) start the job script at once, with the
// allocation's launcher on its nodes, instead of asking the scheduler for a new job. Each
// scheduler adapter reads its own variables (SchedulerAdapter::held_job); this gathers them. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launch/launcher_env.hpp"

namespace dtrain::plan {

struct HeldAllocation {
  std::string variable;                 // the variable that gave it away (the adapter's)
  std::string id;                       // its value: "1234", "5678.polaris-pbs-01"
  std::vector<std::string> schedulers;  // the adapters whose job script runs in it
  std::string default_site;             // the built-in site a job without --site gets
  std::optional<int> nodes;             // its node count, when the environment says
  std::string node_file;                // a file whose distinct lines are its nodes (PBS)
};

// The first adapter, in the registry's order, whose allocation variable is set, with every adapter
// that reads the same variable (PBS Pro and Torque); nullopt when none is. Throws InputError
// naming a variable whose node count is no number.
std::optional<HeldAllocation> held_allocation(const launch::Environment& env);

// The variables that name an allocation, each once, in the registry's order: "A, B or C".
std::string allocation_variables();

// The distinct non-empty lines of a node file (PBS lists a node once per slot).
int distinct_hosts(std::string_view node_file_text);

// "" when a job of site `site_name` on scheduler `scheduler` can run in `allocation`; else why not,
// naming both: "site polaris runs on pbspro, and this shell holds slurm job 12 (...); ...".
std::string site_mismatch(const HeldAllocation& allocation, const std::string& site_name,
                          const std::string& scheduler);

}  // namespace dtrain::plan
