// Submitting a planned MPIJob (site k8s) with kubectl. The command and the parsing of its output
// live in the Kubernetes scheduler adapter (plan/schedulers/k8s.cpp, pure and unit-tested); this
// is the thin part that runs kubectl and keeps the record of the job in the run directory.
#pragma once

#include <string>

#include "planning.hpp"

namespace dtrain::cli {

struct SubmittedMpiJob {
  std::string object;   // as kubectl names it: mpijob.kubeflow.org/NAME
  std::string run_dir;  // runs/<name>-<id>: job.yaml, mpijob.yaml, plan.json as submitted
};

// Writes the run directory, then `kubectl create -f` its manifest. When kubectl is not on PATH or
// refuses the manifest, the run directory is removed and the error names kubectl and quotes its
// output.
SubmittedMpiJob submit_mpijob(const PlannedJob& job);

}  // namespace dtrain::cli
