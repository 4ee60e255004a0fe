// The PBS Pro adapter: the polaris golden (Cray PALS mpiexec), qsub/qrls/qdel/qstat -x -f.
#include <gtest/gtest.h>

#include "../support.hpp"
#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {
namespace {

const SchedulerAdapter& pbspro() { return *scheduler_adapter("pbspro"); }

TEST(PbsPro, GoldenScriptAndPlanJson) { testing::expect_golden_plan("polaris"); }

// Open MPI instead of PALS: mpirun over $PBS_NODEFILE, every variable of the job named.
TEST(PbsPro, MpirunLauncher) {
  SiteProfile site = testing::builtin_profile("polaris");
  site.launcher = "mpirun";
  const JobSpec spec = parse_job_spec(
      "name: x\nsite: polaris\naccount: a\nwalltime: 10\nnodes: 2\nranks_per_node: 4\n"
      "env: {A: 1}\nsite_env: false\ncommand: [a]\n",
      "job.yaml");
  const std::string script = testing::plan_spec(spec, site).script;
  EXPECT_NE(script.find("launch=(mpirun -np 8 -npernode 4 --hostfile \"$PBS_NODEFILE\" -x PATH -x "
                        "LD_LIBRARY_PATH -x DTRAIN_JOB_ID -x DTRAIN_RUN_DIR -x DTRAIN_HOSTS -x A "
                        "-x PYTHONUNBUFFERED "
                        "/opt/dtrain/bin/dtrain bind "),
            std::string::npos)
      << script;
}

TEST(PbsPro, SubmitHeldThenReleaseCancelQuery) {
  EXPECT_EQ(pbspro().submit_held_command("/r/launch.sh"), (Argv{"qsub", "-h", "/r/launch.sh"}));
  EXPECT_EQ(pbspro().release_command("12.srv"), (Argv{"qrls", "12.srv"}));
  EXPECT_EQ(pbspro().cancel_command("12.srv"), (Argv{"qdel", "12.srv"}));
  // PBS Pro shows finished jobs only with -x.
  EXPECT_EQ(pbspro().status_command("12.srv"), (Argv{"qstat", "-x", "-f", "12.srv"}));
  EXPECT_EQ(pbspro().parse_submitted("1234.polaris-pbs-01.hsn.cm\n"), "1234.polaris-pbs-01.hsn.cm");
}

TEST(PbsPro, States) {
  auto running = pbspro().parse_status(
      "Job Id: 12.srv\n    Job_Name = x\n    job_state = R\n"
      "    comment = Job run at Sun Nov 22\n");
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, "R");
  EXPECT_FALSE(running->finished);
  auto finished = pbspro().parse_status("Job Id: 12.srv\n    job_state = F\n    Exit_status = 2\n");
  EXPECT_TRUE(finished->finished);
  EXPECT_EQ(finished->exit_status, 2);
  auto signalled = pbspro().parse_status("job_state = F\nExit_status = 271\n");
  EXPECT_EQ(signalled->exit_status, 128 + 15);  // PBS Pro: 256 + signal
}

}  // namespace
}  // namespace dtrain::plan
