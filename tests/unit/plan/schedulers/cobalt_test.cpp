// The Cobalt adapter: the thetagpu golden, qsub/qrls/qdel and qstat's table.
#include <gtest/gtest.h>

#include "../support.hpp"
#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {
namespace {

const SchedulerAdapter& cobalt() { return *scheduler_adapter("cobalt"); }

TEST(Cobalt, GoldenScriptAndPlanJson) { testing::expect_golden_plan("thetagpu"); }

TEST(Cobalt, SubmitHeldThenReleaseCancelQuery) {
  EXPECT_EQ(cobalt().submit_held_command("/r/launch.sh"), (Argv{"qsub", "-h", "/r/launch.sh"}));
  EXPECT_EQ(cobalt().cancel_command("12"), (Argv{"qdel", "12"}));
  EXPECT_EQ(cobalt().status_command("12"), (Argv{"qstat", "12"}));
  EXPECT_EQ(cobalt().parse_submitted("notice: project X\n9876\n"), "9876");
}

TEST(Cobalt, StatusTable) {
  auto status = cobalt().parse_status(
      "JobID  User  WallTime  Nodes  State    Location\n"
      "==============================================\n"
      "9876   ada   00:10:00  2      running  thetagpu01-02\n");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, "running");
  EXPECT_FALSE(status->finished);
  EXPECT_FALSE(cobalt().parse_status(""));
}

// qstat prints no row, and succeeds, once Cobalt has forgotten the job.
TEST(Cobalt, ForgottenJobs) {
  EXPECT_TRUE(cobalt().forgot_job("", 0));
  EXPECT_FALSE(cobalt().forgot_job("qstat: cannot connect\n", 1));
}

}  // namespace
}  // namespace dtrain::plan
