// Running external programs (the job script, sbatch/qsub and their friends) from the CLI.
#pragma once

#include <string>
#include <vector>

namespace dtrain::cli {

struct JobEnd {
  int status = 0;       // exit status; 128 + N when killed by signal N
  int stop_signal = 0;  // the last job signal this process received and passed on; 0 when none
};

// Runs argv, a local job's script, in a process group of its own with this process's stdout and
// stderr (and stdin, unless that is a terminal: a background group may not read it, and /dev/null
// takes its place), and waits for it. Every job signal this process receives while it waits
// (common/job_signals.hpp: a kill, a terminal's Ctrl-C, a checkpoint signal) is passed on to the
// job (the stopping ones to its first process, the others to the group), so that it reaches the
// supervisor, the launcher and, through them, the ranks; the job is over when this returns.
// Throws when it cannot be started.
JobEnd run_job(const std::vector<std::string>& argv);

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

// Where PATH finds `program` (the first executable of that name, as the shell's lookup), or ""
// when it finds none; PATH unset searches /usr/bin:/bin.
std::string find_on_path(const std::string& program);

// The whole of a small file such as /proc/PID/stat (a process's state for `dtrain stacks` and the
// hang watch); "" when it cannot be read (the process has ended).
std::string read_small_file(const std::string& path);

}  // namespace dtrain::cli
