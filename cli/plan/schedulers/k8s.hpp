// The Kubernetes adapter (k8s.cpp): spec + a Kubernetes site profile -> a Kubeflow MPI Operator
// MPIJob (kubeflow.org/v2beta1): one launcher pod running `mpirun` over the operator's hostfile,
// `nodes` worker pods with `ranks_per_node` slots each. The manifest is the plan's script (what
// `dtrain plan` shows and `dtrain submit` hands to `kubectl create`). Every string reaches the
// manifest through yaml-cpp's emitter, never by concatenation (docs/submit.md, "Kubernetes").
// This header names the rules the manifest follows, for their tests.
#pragma once

#include <string>
#include <string_view>

namespace dtrain::plan {

inline constexpr const char* kMpiJobApiVersion = "kubeflow.org/v2beta1";
// Where each pod keeps the ranks' files when the spec names no run_dir: a pod has no shared
// file system, and /tmp is writable in any image.
inline constexpr const char* kPodRunDirPrefix = "/tmp/dtrain-runs/";

// "" when `name` can name an MPIJob with `workers` workers, else what is wrong with it: the
// operator names the pods `<name>-worker-<i>` and their service `<name>`, so the longest pod name
// must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, at most
// 63 characters).
std::string mpijob_name_problem(std::string_view name, int workers);

// A YAML 1.1 reader (kubectl's, PyYAML) reads `s` back as the same string when written plain:
// it starts like no number, boolean, null or indicator and holds no character YAML gives a
// meaning. The manifest double-quotes every other string.
bool is_plain_yaml_string(std::string_view s);

}  // namespace dtrain::plan
