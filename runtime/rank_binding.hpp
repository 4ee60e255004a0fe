// What a rank was bound to, as its binding record says it (records::RankBinding, docs/metrics.md):
// read from the process when its Meter opens the rank file, whichever adapter bound it (`dtrain
// bind`, the SPANK plugin, init()'s own, mpirun --bind-to, a taskset) or none did. Internal to
// libdtrain.
#pragma once

#include <string>

#include "affinity/cpuset.hpp"
#include "launch/launcher_env.hpp"
#include "records/metric_record.hpp"

namespace dtrain::runtime {

// The facts from values: `cpus` in list form, CUDA_VISIBLE_DEVICES when set (empty too), and of
// DTRAIN_NICS and the NIC variables of the communication libraries
// (affinity::kNicLibraryVariables) those set and not empty, in that order. Pure.
records::RankBinding describe_binding(const launch::Environment& env, const affinity::CpuSet& cpus,
                                      std::string host);

// Of the calling thread (its CPU affinity), this process's environment and this machine.
records::RankBinding current_binding();

}  // namespace dtrain::runtime
