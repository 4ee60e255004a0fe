// The six affinity flags `dtrain bind` and `dtrain topo` share (--gpu, --gpu-visibility, --cpu,
// --nic, --gpus-allowed, --cpus-allowed), registered and parsed in one place so that both commands
// offer the same defaults, the same help and the same messages.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "affinity/affinity.hpp"
#include "affinity/policy.hpp"

namespace dtrain::cli {

// The flags as typed; the defaults are affinity::Policy's.
struct AffinityFlags {
  std::string gpu = "closest";
  std::string gpu_visibility = "own";
  std::string cpu = "numa";
  std::string nic = "closest";
  std::string gpus_allowed;  // empty: not given
  std::string cpus_allowed;  // empty: not given

  // Throw affinity::PolicyError naming the flag, e.g. `--gpu: unknown policy "nearest"; ...`.
  affinity::Policy policy() const;
  affinity::Restriction restriction() const;
};

// Registers the six flags on `cmd`, writing into `flags` (which must outlive the parse).
void add_affinity_flags(CLI::App& cmd, AffinityFlags& flags);

}  // namespace dtrain::cli
