#include <nlohmann/json.hpp>

#include "plan/launch_plan.hpp"

namespace dtrain::plan {

nlohmann::json plan_to_json(const LaunchPlan& plan) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : plan.ranks) {
    ranks.push_back(
        {{"rank", r.rank}, {"node", r.node}, {"local_rank", r.local_rank}, {"host", r.host}});
  }
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : plan.env) env[k] = v;
  return {
      {"version", kPlanJsonVersion},
      {"job", {{"name", plan.name}, {"id", plan.job_id}, {"site", plan.site}}},
      {"run_dir", plan.run_dir},
      {"script", plan.script_name},
      {"nodes", plan.nodes},
      {"ranks_per_node", plan.ranks_per_node},
      {"world_size", plan.world_size()},
      {"command", plan.command},
      {"env", env},
      {"ranks", ranks},
  };
}

}  // namespace dtrain::plan
