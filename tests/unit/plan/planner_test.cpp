#include "plan/planner.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace dtrain::plan {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Golden files (hwloc's test-hwloc-calc pattern): DTRAIN_UPDATE_GOLDEN=1 rewrites them, and the
// diff is then reviewed like any other change.
void expect_golden(const std::string& path, const std::string& actual) {
  const char* update = std::getenv("DTRAIN_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << actual;
    return;
  }
  EXPECT_EQ(read(path), actual) << "golden file " << path
                                << " differs; rerun with DTRAIN_UPDATE_GOLDEN=1 to update it";
}

PlanInputs fixed_inputs() {
  PlanInputs in;
  in.job_id = "20261122-100000-42";
  in.run_dir = "/home/ada/runs/pi-20261122-100000-42";
  in.workdir = "/home/ada/my project";
  in.dtrain_exe = "/opt/dtrain/bin/dtrain";
  in.version = "0.1.0";
  return in;
}

const std::string kTemplate = read(DTRAIN_TEMPLATE_DIR "/local.sh.tmpl");

TEST(PlanLocal, GoldenScriptAndPlanJson) {
  const std::string dir = DTRAIN_FIXTURE_DIR "/golden/local";
  const JobSpec spec = parse_job_spec(read(dir + "/job.yaml"), "job.yaml");
  const LaunchPlan plan = plan_local(spec, {"node17", 2, true}, fixed_inputs(), kTemplate);
  expect_golden(dir + "/expected.sh", plan.script);
  expect_golden(dir + "/expected.plan.json", plan_to_json(plan).dump(2) + "\n");
}

TEST(PlanLocal, RankMapCoversEveryRankOnce) {
  JobSpec spec;
  spec.name = "x";
  spec.ranks_per_node = 3;
  spec.command = {"true"};
  const LaunchPlan plan = plan_local(spec, {"h", 8, false}, fixed_inputs(), kTemplate);
  ASSERT_EQ(plan.world_size(), 3);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(plan.ranks[r].rank, r);
    EXPECT_EQ(plan.ranks[r].local_rank, r);
    EXPECT_EQ(plan.ranks[r].node, 0);
    EXPECT_EQ(plan.ranks[r].host, "h");
  }
}

TEST(PlanLocal, RootAndOversubscriptionFlagsOnlyWhenNeeded) {
  JobSpec spec;
  spec.name = "x";
  spec.command = {"true"};
  spec.ranks_per_node = 2;
  auto script = plan_local(spec, {"h", 2, false}, fixed_inputs(), kTemplate).script;
  EXPECT_NE(script.find("exec mpirun -n 2 \\"), std::string::npos) << script;
  spec.ranks_per_node = 4;
  script = plan_local(spec, {"h", 2, true}, fixed_inputs(), kTemplate).script;
  EXPECT_NE(script.find("exec mpirun --allow-run-as-root --oversubscribe -n 4 \\"),
            std::string::npos)
      << script;
}

TEST(PlanLocal, UserStringsAreQuotedAndOurVariablesComeLast) {
  JobSpec spec;
  spec.name = "x";
  spec.command = {"./train", "$(touch /tmp/x)"};
  spec.env = {{"DTRAIN_RUN_DIR", "/elsewhere"}, {"MSG", "it's"}};
  const auto plan = plan_local(spec, {"h", 2, false}, fixed_inputs(), kTemplate);
  EXPECT_NE(plan.script.find("-- ./train '$(touch /tmp/x)'\n"), std::string::npos) << plan.script;
  EXPECT_NE(plan.script.find("export MSG='it'\\''s'\n"), std::string::npos);
  const auto user = plan.script.find("export DTRAIN_RUN_DIR=/elsewhere");
  const auto ours = plan.script.find("export DTRAIN_RUN_DIR=/home/ada/runs/pi-20261122-100000-42");
  ASSERT_NE(user, std::string::npos);
  ASSERT_NE(ours, std::string::npos);
  EXPECT_LT(user, ours);
}

}  // namespace
}  // namespace dtrain::plan

namespace dtrain::plan {
namespace {

TEST(PlanLocal, SetupModulesAndWalltimeBecomeScriptLines) {
  const JobSpec spec = parse_job_spec(
      "name: x\ncommand: python train.py | tee out\nmodules: [conda/2024]\n"
      "setup: [\"source venv/bin/activate\"]\nwalltime: 10\naccount: proj\n",
      "job.yaml");
  const LaunchPlan plan = plan_local(spec, {"h", 2, false}, fixed_inputs(), kTemplate);
  EXPECT_NE(plan.script.find("module load conda/2024\nsource venv/bin/activate\n"),
            std::string::npos)
      << plan.script;
  EXPECT_NE(plan.script.find("exec timeout --signal=TERM --kill-after=30 600 mpirun -n 1"),
            std::string::npos)
      << plan.script;
  EXPECT_NE(plan.script.find("-- bash -c 'python train.py | tee out'\n"), std::string::npos);
  EXPECT_EQ(plan.warnings,
            std::vector<std::string>{"site local runs on this machine; ignoring account"});
}

}  // namespace
}  // namespace dtrain::plan
