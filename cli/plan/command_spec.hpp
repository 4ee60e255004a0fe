// `dtrain run`'s job spec: torchrun's habit (`dtrain run -n 4 python train.py`) written as the YAML
// a user would have written for `dtrain submit`, so the one planner, the same run directory and
// the same report serve both, and job.yaml records what ran. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/job_spec.hpp"

namespace dtrain::plan {

// What `dtrain run`'s flags set; anything unset is left out of the spec (the spec's default).
struct CommandJob {
  std::vector<std::string> command;  // the program and its arguments, each word verbatim
  std::string name;                  // "": command_job_name(command)
  std::string site;                  // "": the spec's default (local)
  std::optional<int> nodes;
  std::optional<int> ranks_per_node;
  std::string framework;  // "": none given
  std::optional<int> restarts;
  // The run settings (common/run_settings.hpp) as written after --records, --hang-after,
  // --on-hang; "": none given.
  std::string records;
  std::string hang_after;
  std::string on_hang;
};

// The job's name from its command: the script or module an interpreter runs (python3 train.py ->
// "train", python -m pkg.mod -> "pkg.mod", bash run.sh -> "run"), else the program's ("./pi" ->
// "pi"); its characters outside the spec's name ([A-Za-z0-9._-], 64 at most) dropped; "job" when
// nothing is left.
std::string command_job_name(const std::vector<std::string>& command);

// The spec's YAML text of the numbers the flags set (already checked by run's number parser) and
// the command (each word double-quoted, so "1", "null" or "yes" stay the words they are), named
// command_job_name(command).
std::string command_spec_text(const CommandJob& job);

// The words the flags set (--name, --framework, --records, --hang-after, --on-hang, --site) as
// overrides of that text: a bad value is named with its flag (`--framework torchy: framework:
// ...`), and job.yaml records it.
SpecOverrides command_spec_overrides(const CommandJob& job);

}  // namespace dtrain::plan
