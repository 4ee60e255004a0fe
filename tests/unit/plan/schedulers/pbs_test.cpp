// The Torque/PBS adapter: the pbs golden, qsub/qrls/qdel/qstat -f.
#include <gtest/gtest.h>

#include "../support.hpp"
#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {
namespace {

const SchedulerAdapter& pbs() { return *scheduler_adapter("pbs"); }

TEST(Pbs, GoldenScriptAndPlanJson) { testing::expect_golden_plan("pbs"); }

TEST(Pbs, SubmitHeldThenReleaseCancelQuery) {
  EXPECT_EQ(pbs().submit_held_command("/r/launch.sh"), (Argv{"qsub", "-h", "/r/launch.sh"}));
  EXPECT_EQ(pbs().release_command("12.srv"), (Argv{"qrls", "12.srv"}));
  EXPECT_EQ(pbs().cancel_command("12.srv"), (Argv{"qdel", "12.srv"}));
  EXPECT_EQ(pbs().status_command("12.srv"), (Argv{"qstat", "-f", "12.srv"}));
  EXPECT_TRUE(pbs().failed_nodes_command("n1").empty());
  try {
    pbs().parse_submitted("qsub: submit error\n");
    FAIL() << "no error";
  } catch (const SubmitError& e) {
    EXPECT_STREQ(e.what(),
                 "expected a job id such as \"123\" or \"123.server\" in the output, got "
                 "\"qsub: submit error\"");
  }
  EXPECT_TRUE(pbs().forgot_job("qstat: Unknown Job Id 7.srv\n", 153));
}

TEST(Pbs, StatesOfTorque) {
  // Torque (and Slurm's Torque wrapper): C, and no Exit_status.
  auto torque = pbs().parse_status("Job Id:\t7\n\tjob_state = C\n\tqueue = debug\n");
  EXPECT_TRUE(torque->finished);
  EXPECT_FALSE(torque->exit_status);
  EXPECT_FALSE(pbs().parse_status("qstat: Unknown Job Id 7.srv\n"));
}

}  // namespace
}  // namespace dtrain::plan
