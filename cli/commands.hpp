// The CLI surface in one place: each subcommand registers its flags on the app and, when chosen,
// leaves the action to run in `action` (parsing stays separate from work, so main() can send every
// error through one funnel).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace dtrain::cli {

using Action = std::function<int()>;

void register_submit(CLI::App& app, Action& action);
void register_run(CLI::App& app, Action& action);
void register_plan(CLI::App& app, Action& action);
void register_stats(CLI::App& app, Action& action);
void register_logs(CLI::App& app, Action& action);
void register_stacks(CLI::App& app, Action& action);
void register_timeline(CLI::App& app, Action& action);
void register_run_rank(CLI::App& app, Action& action);
void register_supervise(CLI::App& app, Action& action);
void register_note_lost_rank(CLI::App& app, Action& action);
void register_launch_status(CLI::App& app, Action& action);
void register_topo(CLI::App& app, Action& action);
void register_bind(CLI::App& app, Action& action);
void register_doctor(CLI::App& app, Action& action);
void register_report(CLI::App& app, Action& action);

}  // namespace dtrain::cli
