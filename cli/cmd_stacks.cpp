// `dtrain stacks RUN_DIR`: while a job runs (a hang, a rank that is slow), the stacks of every
// rank on this node, from eu-stack (or gdb), merged into one tree whose branches carry rank ranges,
// so the rank that is somewhere else stands apart (report/stack_tree.hpp). Bounded by --timeout: a
// process the debugger cannot read in time is named, never waited for. docs/logs.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "flag_values.hpp"
#include "report/json_text.hpp"
#include "stack_capture.hpp"

namespace dtrain::cli {
namespace {

struct StacksOptions {
  std::string run_dir;
  long long timeout = 8;
  bool json = false;
};

int run_stacks(const StacksOptions& opts) {
  const auto started = std::chrono::steady_clock::now();
  RankProcesses ranks = find_rank_processes(opts.run_dir);
  std::vector<report::RankStacks> stacks =
      capture_stacks(ranks.here, std::chrono::seconds(opts.timeout));
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  bool any = false;
  for (const auto& s : stacks) any = any || s.problem.empty();
  for (auto& s : ranks.elsewhere) stacks.push_back(std::move(s));
  std::string out;
  if (opts.json) {
    nlohmann::json j{{"run_dir", opts.run_dir},
                     {"host", ranks.host},
                     {"attempt", ranks.attempt},
                     {"ranks", nlohmann::json::array()}};
    for (const auto& s : stacks) j["ranks"].push_back(report::rank_stacks_to_json(s));
    out = report::json_text(j, 2) + "\n";
  } else {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", took);
    out = "dtrain stacks: " + opts.run_dir + ", attempt " + std::to_string(ranks.attempt + 1) +
          ", ranks on " + ranks.host + ", taken in " + seconds + " s\n" +
          report::format_stack_tree(stacks);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  // Nothing to show is a failure a script can see; some ranks without a stack are not.
  return any ? 0 : 1;
}

}  // namespace

void register_stacks(CLI::App& app, Action& action) {
  auto opts = std::make_shared<StacksOptions>();
  auto* cmd = app.add_subcommand("stacks",
                                 "While a job runs: every rank's stacks on this node (eu-stack or "
                                 "gdb), merged into one tree whose "
                                 "branches name their ranks");
  cmd->add_option("run_dir", opts->run_dir, "Run directory (runs/<name>-<id>)")->required();
  add_whole_number_flag(
      *cmd, "--timeout", opts->timeout, 1, 3600,
      "Seconds the debugger may take in all (default 8); a rank not read by then is "
      "named, and left running");
  cmd->add_flag("--json", opts->json, "Print each rank's frames as JSON");
  cmd->callback([opts, &action] { action = [opts] { return run_stacks(*opts); }; });
}

}  // namespace dtrain::cli
