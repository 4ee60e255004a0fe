// Applying a decision to the calling process: the one place that binds CPUs, so every adapter
// (dtrain bind, the SPANK plugin) binds the same way and at process birth, before any thread of
// NCCL/UCX/OpenMP starts (NVIDIA TensorRT-LLM PR #18117 measured what late binding costs).
#pragma once

#include "affinity/cpuset.hpp"

namespace dtrain::affinity {

// Restricts the calling thread (and so everything it execs) to `cpus`, by Linux CPU number.
// Throws std::runtime_error with the cpuset and errno text when the kernel refuses.
void bind_this_process(const CpuSet& cpus);

// Restricts every thread of the calling process to `cpus`: the calling thread first (throwing as
// above), then the others listed in /proc/self/task. For a runtime that applies the decision after
// its own or a library's threads (PMIx, MPI, OpenMP) already exist; those would otherwise keep the
// launcher's mask. A thread that exits meanwhile is skipped. Throws std::runtime_error naming the
// thread and the cpuset when the kernel refuses one.
void bind_all_threads(const CpuSet& cpus);

// The CPUs the calling thread may run on now.
CpuSet current_cpu_affinity();

}  // namespace dtrain::affinity
