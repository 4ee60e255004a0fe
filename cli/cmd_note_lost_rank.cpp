// `dtrain note-lost-rank --run-dir DIR`: what a job script runs after a failed launch. The
// launcher can end a rank, logger and all, before it hears which rank was lost (Open MPI's abort
// has Slurm end the whole step within milliseconds): each such rank's log gets the line another
// rank wrote (report::lost_rank_notes), once, whoever runs it again (`dtrain submit --wait`,
// `dtrain supervise`). The step that outlives the launch in a batch job without restarts that
// nobody waits for is the script itself.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {

void register_note_lost_rank(CLI::App& app, Action& action) {
  auto run_dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "note-lost-rank",
      "After a failed launch: give each rank ended before it heard which rank was lost the line "
      "another rank wrote (used by job scripts)");
  cmd->add_option("--run-dir", *run_dir, "Run directory of the job")
      ->envname("DTRAIN_RUN_DIR")
      ->required();
  cmd->callback([run_dir, &action] {
    action = [run_dir] {
      const int added = append_lost_rank_notes(*run_dir, std::nullopt, "the job script");
      if (added > 0) {
        std::printf(
            "dtrain: note-lost-rank: %d rank log(s) of %s got the line naming the lost "
            "rank\n",
            added, run_dir->c_str());
      }
      return 0;
    };
  });
}

}  // namespace dtrain::cli
