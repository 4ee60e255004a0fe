// What the planner decides for one job: the script to run and where every rank goes. It is a
// value: the CLI writes it to the run directory (launch.sh, plan.json) and runs or submits it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "records/run_dir_layout.hpp"

namespace dtrain::plan {

struct RankEntry {
  int rank = 0;
  int node = 0;
  int local_rank = 0;
  std::string host;
};

struct LaunchPlan {
  std::string name;
  std::string site;
  std::string job_id;
  std::string run_dir;  // absolute
  int nodes = 1;
  int ranks_per_node = 1;
  std::string script;                             // the text of launch.sh (or of the manifest)
  std::string script_name{records::kScriptFile};  // its file in the run directory
  std::vector<std::string> command;
  std::vector<RankEntry> ranks;
  std::vector<std::pair<std::string, std::string>> env;  // exported to every rank, in order
  std::vector<std::string> warnings;  // spec settings this site cannot honour, said out loud

  int world_size() const { return static_cast<int>(ranks.size()); }
};

inline constexpr int kPlanJsonVersion = 1;

nlohmann::json plan_to_json(const LaunchPlan& plan);

}  // namespace dtrain::plan
