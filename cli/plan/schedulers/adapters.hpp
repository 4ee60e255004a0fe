// The adapters registered in scheduler.cpp, one per file of this folder. Only the registry
// includes this; everything else reaches an adapter through scheduler_adapter().
#pragma once

#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {

const SchedulerAdapter& local_adapter();
const SchedulerAdapter& slurm_adapter();
const SchedulerAdapter& pbspro_adapter();
const SchedulerAdapter& pbs_adapter();
const SchedulerAdapter& cobalt_adapter();
const SchedulerAdapter& k8s_adapter();

}  // namespace dtrain::plan
