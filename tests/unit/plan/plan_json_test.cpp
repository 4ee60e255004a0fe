// plan.json (plan_json.cpp): every field of a LaunchPlan under its documented name, the ranks in
// order, and the format version.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan/launch_plan.hpp"

namespace dtrain::plan {
namespace {

TEST(PlanJson, WritesEveryFieldOfThePlan) {
  LaunchPlan plan;
  plan.name = "resnet";
  plan.site = "slurm";
  plan.job_id = "1234";
  plan.run_dir = "/runs/resnet-1234";
  plan.nodes = 2;
  plan.ranks_per_node = 1;
  plan.script = "#!/bin/bash\n";
  plan.script_name = "job.sbatch";
  plan.command = {"python", "train.py", "--lr=0.1"};
  plan.ranks = {{0, 0, 0, "n1"}, {1, 1, 0, "n2"}};
  plan.env = {{"Z_FIRST", "1"}, {"A_SECOND", "two words"}};
  plan.warnings = {"not in plan.json"};

  const nlohmann::json expected = nlohmann::json::parse(R"({
    "version": 1,
    "job": {"name": "resnet", "id": "1234", "site": "slurm"},
    "run_dir": "/runs/resnet-1234",
    "script": "job.sbatch",
    "nodes": 2,
    "ranks_per_node": 1,
    "world_size": 2,
    "command": ["python", "train.py", "--lr=0.1"],
    "env": {"Z_FIRST": "1", "A_SECOND": "two words"},
    "ranks": [
      {"rank": 0, "node": 0, "local_rank": 0, "host": "n1"},
      {"rank": 1, "node": 1, "local_rank": 0, "host": "n2"}
    ]
  })");
  EXPECT_EQ(plan_to_json(plan), expected);
  EXPECT_EQ(kPlanJsonVersion, 1);
}

TEST(PlanJson, AnEmptyPlanHasEmptyListsAndAnEmptyEnvObject) {
  const nlohmann::json json = plan_to_json(LaunchPlan{});
  EXPECT_EQ(json["script"], "launch.sh");
  EXPECT_EQ(json["world_size"], 0);
  EXPECT_EQ(json["ranks"], nlohmann::json::array());
  EXPECT_EQ(json["command"], nlohmann::json::array());
  EXPECT_EQ(json["env"], nlohmann::json::object());
  EXPECT_EQ(json["job"], (nlohmann::json{{"name", ""}, {"id", ""}, {"site", ""}}));
}

}  // namespace
}  // namespace dtrain::plan
