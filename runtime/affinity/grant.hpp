// What the scheduler already granted this job on the node, as told by the environment of a live
// process: Slurm's SLURM_STEP_GPUS (node GPU indices), or CUDA_VISIBLE_DEVICES /
// ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES when they hold plain indices. The solver then works
// inside that grant (mpibind does the same with Slurm's allocated cores; sglang #39552 shows what
// happens otherwise). Pure: the environment is passed in as a value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launch/launcher_env.hpp"

namespace dtrain::affinity {

struct GpuGrant {
  std::optional<std::vector<int>> gpus;  // node GPU indices (PCI order); nullopt: no restriction
  std::string variable;                  // where it came from, for messages; "" when none
  // CUDA_VISIBLE_DEVICES as set, split at commas (see RankEnvInputs).
  std::optional<std::vector<std::string>> inherited_visible_devices;
};

// Throws PolicyError when a variable is set but cannot be read as a restriction, e.g. GPU UUIDs in
// CUDA_VISIBLE_DEVICES (which GPU they are needs NVML): the message asks for --gpus-allowed.
GpuGrant gpu_grant_from_environment(const launch::Environment& env);

// A list of non-negative indices "0,2-3" (the list form of cpuset.hpp); throws PolicyError naming
// `what`.
std::vector<int> parse_index_list(std::string_view text, std::string_view what);

}  // namespace dtrain::affinity
