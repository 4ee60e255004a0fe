// Running external programs (the job script, later sbatch/qsub) from the CLI.
#pragma once

#include <string>
#include <vector>

namespace dtrain::cli {

// Runs argv with this process's stdin/stdout/stderr and returns its exit status (128+N when
// killed by signal N). Throws when it cannot be started.
int run_inheriting_stdio(const std::vector<std::string>& argv);

// Absolute path of the running executable, so job scripts call back into this very dtrain.
std::string self_executable();

}  // namespace dtrain::cli
