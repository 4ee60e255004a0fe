// dtrain: one error funnel for every subcommand. Exit codes (docs/errors.md): 0 success; the
// job's own status for a local run; 2 a bad spec, flag or input; 1 another failure; 70 a bug.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <new>

#include "commands.hpp"
#include "dtrain/config.hpp"
#include "exit_codes.hpp"
#include "flag_values.hpp"

int main(int argc, char** argv) {
  using namespace dtrain::cli;
  CLI::App app{"dtrain: data-parallel training jobs from one spec, on Slurm, PBS or this machine"};
  app.set_version_flag("--version", std::string("dtrain ") + DTRAIN_VERSION);
  app.require_subcommand(1);
  Action action;
  register_submit(app, action);
  register_run(app, action);
  register_plan(app, action);
  register_stats(app, action);
  register_logs(app, action);
  register_stacks(app, action);
  register_timeline(app, action);
  register_report(app, action);
  register_run_rank(app, action);
  register_supervise(app, action);
  register_note_lost_rank(app, action);
  register_launch_status(app, action);
  register_topo(app, action);
  register_bind(app, action);
  register_doctor(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help and the version; a bad command line is said as every dtrain message is
    // (CLI11's "run_dir is required\nRun with --help for more information." was printed raw).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::string command;
    for (const CLI::App* sub : app.get_subcommands()) command = sub->get_name();
    std::fprintf(stderr, "%s\n", usage_error_text(command, e.what()).c_str());
    return kExitUsage;
  }
  return run_guarded(action);
}
