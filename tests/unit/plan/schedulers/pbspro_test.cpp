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

// The issue's new user's spec (4 nodes, conda module, restarts, checkpoint with requeue): the
// default queue that fits, the module path, ALCF's library path, the timed checkpoint signal and
// a requeue without privileges.
TEST(PbsPro, GoldenNewUserSpec) { testing::expect_golden_plan("polaris-conda"); }

// cpus_per_rank counts hardware threads: whole cores bind whole cores (--cpu-bind core counts
// cores), anything else that many hardware threads (--cpu-bind depth counts those).
TEST(PbsPro, DepthGivesEachRankItsCpusPerRank) {
  const auto launch = [](const std::string& fields) {
    const JobSpec spec = parse_job_spec(
        "name: x\nsite: polaris\naccount: a\nwalltime: 10\ncommand: [a]\n" + fields, "job.yaml");
    const std::string script = testing::plan_spec(spec, testing::builtin_profile("polaris")).script;
    const auto at = script.find("launch=(mpiexec ");
    return script.substr(at, script.find(" /opt/dtrain", at) - at);
  };
  // The default: 64 hardware threads / 4 ranks = 16 = 8 cores, one NUMA domain each.
  EXPECT_EQ(launch(""), "launch=(mpiexec -n 4 --ppn 4 --depth 8 --cpu-bind core");
  EXPECT_EQ(launch("cpus_per_rank: 8\n"), "launch=(mpiexec -n 4 --ppn 4 --depth 4 --cpu-bind core");
  EXPECT_EQ(launch("cpus_per_rank: 3\n"),
            "launch=(mpiexec -n 4 --ppn 4 --depth 3 --cpu-bind depth");
}

// site_env: false drops ALCF's library path with the rest of its NCCL environment (the plugin
// is what hangs some codes).
TEST(PbsPro, SiteEnvFalseDropsTheLibraryPath) {
  const std::string text = "name: x\nsite: polaris\naccount: a\nwalltime: 10\ncommand: [a]\n";
  const auto script = [&](const std::string& extra) {
    return testing::plan_spec(parse_job_spec(text + extra, "job.yaml"),
                              testing::builtin_profile("polaris"))
        .script;
  };
  const std::string line =
      "\nexport LD_LIBRARY_PATH=/soft/libraries/hwloc/lib/:/soft/libraries/aws-ofi-nccl/v1.9.1-aws/"
      "lib\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n";
  EXPECT_NE(script("").find(line), std::string::npos) << script("");
  EXPECT_EQ(script("site_env: false\n").find("LD_LIBRARY_PATH="), std::string::npos);
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
