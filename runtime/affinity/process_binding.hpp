// Applying a decision to the calling process: the one place that binds CPUs, so every adapter
// (dtrain bind, the SPANK plugin) binds the same way and at process birth, before any thread of
// NCCL/UCX/OpenMP starts (NVIDIA TensorRT-LLM PR #18117 measured what late binding costs).
#pragma once

#include "affinity/cpuset.hpp"

namespace dtrain::affinity {

// Restricts the calling thread (and so everything it execs) to `cpus`, by Linux CPU number.
// Throws std::runtime_error with the cpuset and errno text when the kernel refuses.
void bind_this_process(const CpuSet& cpus);

// The CPUs the calling thread may run on now.
CpuSet current_cpu_affinity();

}  // namespace dtrain::affinity
