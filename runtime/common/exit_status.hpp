// A child process's end as a shell reports it, and running a command in place of this process:
// one definition for every process dtrain starts (the CLI's commands, `supervise`, `run-rank`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dtrain {

// waitpid's status as an exit code: the status of a process that exited, 128 + N for one killed
// by signal N, 1 otherwise.
int exit_code_of(int wait_status);

// execvp(argv); when that fails, writes "WHO: cannot run ARGV0: REASON" to stderr and _exits 127
// (the shell's "command not found"). For a forked child: nothing but async-signal-safe calls
// after the fork's own set-up.
[[noreturn]] void exec_or_exit_127(const std::vector<std::string>& argv, std::string_view who);

}  // namespace dtrain
