// The kubectl command that submits an MPIJob manifest and the parser for what it prints. Pure:
// `dtrain submit` runs the command (cli/mpijob_submit.cpp) and hands its output here.
#pragma once

#include <string>
#include <string_view>

#include "plan/scheduler_commands.hpp"

namespace dtrain::plan {

// `kubectl create -f MANIFEST -o name`. create, not apply: a second job with the name of one that
// exists is refused (AlreadyExists) instead of patching the job in flight.
Argv kubectl_create_command(const std::string& manifest);

// The created object, "mpijob.kubeflow.org/NAME", from the last non-empty line of the output
// (kubectl may print warnings first). Throws SubmitError quoting the output when it is not there.
std::string parse_kubectl_created(std::string_view output);

}  // namespace dtrain::plan
