// `dtrain launch-status --run-dir DIR STATUS`: what a job script runs after its launch ended with
// STATUS. It prints the status the script acts on: kExitRequeue (85) when the ranks' logs say
// every rank stopped for a requeue though the launcher did not pass 85 on (MPICH's Hydra exits 0
// after such a stop; what Cray PALS returns is not known: report/requeue_request.hpp), else STATUS.
// The reason for a change goes to stderr, into the job's output.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {

void register_launch_status(CLI::App& app, Action& action) {
  struct Options {
    std::string run_dir;
    int status = 0;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "launch-status",
      "After a launch ended: print the exit status the job acts on, 85 (requeue) when every rank "
      "stopped for a requeue though the launcher did not say so (used by job scripts)");
  cmd->add_option("--run-dir", opts->run_dir, "Run directory of the job")
      ->envname("DTRAIN_RUN_DIR")
      ->required();
  cmd->add_option("STATUS", opts->status, "The launcher's exit status")
      ->required()
      ->check(CLI::Range(0, 255));
  cmd->callback([opts, &action] {
    action = [opts] {
      require_run_dir(opts->run_dir);
      const report::LaunchStatus decided = read_launch_status(opts->run_dir, opts->status);
      if (!decided.note.empty()) std::fprintf(stderr, "dtrain: %s\n", decided.note.c_str());
      std::printf("%d\n", decided.status);
      return 0;
    };
  });
}

}  // namespace dtrain::cli
