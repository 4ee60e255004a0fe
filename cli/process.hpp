// Running external programs (the job script, sbatch/qsub and their friends) from the CLI.
#pragma once

#include <string>
#include <vector>

namespace dtrain::cli {

// Runs argv with this process's stdin/stdout/stderr and returns its exit status (128+N when
// killed by signal N). Throws when it cannot be started.
int run_inheriting_stdio(const std::vector<std::string>& argv);

struct Captured {
  int status = 0;  // exit status; 128 + N when killed by signal N; 127 when not found
  std::string out;
  std::string err;
};

// Runs argv with stdin from /dev/null and returns its status and what it printed. A program that
// is not on PATH gives status 127 and a message in `err`, like the shell.
Captured run_capturing(const std::vector<std::string>& argv);

// Absolute path of the running executable, so job scripts call back into this very dtrain.
std::string self_executable();

}  // namespace dtrain::cli
