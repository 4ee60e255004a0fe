// The Slurm adapter: sbatch scripts (the slurm and perlmutter goldens), sbatch/scontrol/sinfo and
// what they print, and an elastic job's restarts: its nodes from SLURM_JOB_NODELIST, which nodes
// sinfo's answer says are lost, the next srun without them (its --nodes and --exclude, as the job
// script's launch reads) and the variables that srun must not inherit.
#include <gtest/gtest.h>

#include "../support.hpp"
#include "common/errors.hpp"
#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {
namespace {

const SchedulerAdapter& slurm() { return *scheduler_adapter("slurm"); }
const SchedulerAdapter& pbs() { return *scheduler_adapter("pbs"); }

// The InputError `call` throws, "" when it throws none.
template <typename Call>
std::string input_error(Call call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Slurm, GoldenScriptAndPlanJson) {
  testing::expect_golden_plan("slurm");
  testing::expect_golden_plan("perlmutter");
}

// restarts: srun runs under `dtrain supervise`, which the checkpoint signal reaches first.
TEST(Slurm, GoldenScriptWithRestarts) { testing::expect_golden_plan("slurm-restarts"); }

// nodes: 2..3: 3 nodes with --no-kill, srun on 3, `dtrain supervise --min-nodes 2`.
TEST(Slurm, GoldenScriptWithAnElasticNodeRange) { testing::expect_golden_plan("slurm-elastic"); }

TEST(Slurm, SubmitHeldThenReleaseCancelQuery) {
  EXPECT_EQ(slurm().submission(), Submission::kHeldBatchJob);
  EXPECT_EQ(slurm().submit_held_command("/r/launch.sh"),
            (Argv{"sbatch", "--hold", "--parsable", "/r/launch.sh"}));
  EXPECT_EQ(slurm().release_command("12"), (Argv{"scontrol", "release", "12"}));
  EXPECT_EQ(slurm().cancel_command("12"), (Argv{"scancel", "12"}));
  EXPECT_EQ(slurm().status_command("12"), (Argv{"scontrol", "show", "job", "-o", "12"}));
}

TEST(Slurm, JobIdsAsSbatchPrintsThem) {
  EXPECT_EQ(slurm().parse_submitted("4350001\n"), "4350001");
  EXPECT_EQ(slurm().parse_submitted("77;perlmutter\n"), "77");
  EXPECT_EQ(slurm().parse_submitted("Submitted batch job 5\n"), "5");
  try {
    slurm().parse_submitted("sbatch: error: invalid account\n");
    FAIL() << "no error";
  } catch (const SubmitError& e) {
    EXPECT_STREQ(e.what(),
                 "expected a job id such as \"123\" in the output, got \"sbatch: error: invalid "
                 "account\"");
  }
  EXPECT_THROW(slurm().parse_submitted(""), SubmitError);
}

TEST(Slurm, ForgottenJobs) {
  EXPECT_TRUE(slurm().forgot_job("slurm_load_jobs error: Invalid job id specified\n", 1));
  EXPECT_FALSE(slurm().forgot_job("slurm_load_jobs error: Socket timed out\n", 1));
}

TEST(Slurm, StatesAndExitCodes) {
  auto held = slurm().parse_status(
      "JobId=5 JobName=x UserId=root(0) Priority=0 JobState=PENDING Reason=JobHeldUser "
      "Dependency=(null) ExitCode=0:0 RunTime=00:00:00\n");
  ASSERT_TRUE(held);
  EXPECT_EQ(held->state, "PENDING");
  EXPECT_EQ(held->reason, "JobHeldUser");
  EXPECT_FALSE(held->finished);
  EXPECT_FALSE(held->exit_status);

  auto failed = slurm().parse_status(
      "JobId=5 JobState=FAILED Reason=NonZeroExitCode "
      "ExitCode=3:0\n");
  ASSERT_TRUE(failed);
  EXPECT_TRUE(failed->finished);
  EXPECT_EQ(failed->exit_status, 3);
  auto killed = slurm().parse_status("JobId=5 JobState=CANCELLED ExitCode=0:9");
  EXPECT_EQ(killed->exit_status, 128 + 9);
  // Cancelled before it ran: no status of its own, still a failure.
  auto cancelled = slurm().parse_status("JobId=5 JobState=CANCELLED ExitCode=0:0");
  EXPECT_EQ(cancelled->exit_status, 1);
  auto requeued = slurm().parse_status("JobId=5 JobState=REQUEUED ExitCode=85:0");
  EXPECT_FALSE(requeued->finished);
  EXPECT_FALSE(slurm().parse_status("slurm_load_jobs error: Invalid job id specified\n"));
}

TEST(Slurm, NodeFailureNamesTheNodes) {
  auto lost = slurm().parse_status(
      "JobId=7 JobState=NODE_FAIL Reason=NodeDown ExitCode=0:0 "
      "NodeList=node[1-2] BatchHost=node1\n");
  ASSERT_TRUE(lost);
  EXPECT_TRUE(lost->finished);
  EXPECT_TRUE(lost->node_failed);
  EXPECT_EQ(lost->nodes, "node[1-2]");
  EXPECT_EQ(lost->exit_status, 1);
  EXPECT_FALSE(slurm().parse_status("JobId=7 JobState=FAILED ExitCode=1:0")->node_failed);
  EXPECT_EQ(slurm().parse_status("JobId=7 JobState=PENDING NodeList=(null)")->nodes, "");
  EXPECT_EQ(slurm().failed_nodes_command("node[1-2]"),
            (Argv{"sinfo", "-h", "-N", "-n", "node[1-2]", "-t", "down,fail,no_respond,drain", "-o",
                  "%N|%T|%E"}));
  EXPECT_TRUE(pbs().failed_nodes_command("n1").empty());
  // A node in two partitions is listed twice; "none" is sinfo's empty reason.
  EXPECT_EQ(slurm().parse_failed_nodes(
                "node2|down*|Not responding\nnode2|down*|Not responding\nnode3|drained|none\n\n"),
            (std::vector<std::string>{"node2 (Not responding)", "node3"}));
  // sinfo 22.05's lines for a node whose slurmd was killed under a job, 10 s and 20 s later.
  const auto failures =
      slurm().parse_node_failures("node3|mixed*|none\nnode2|down*|Not responding\n");
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].name, "node3");
  EXPECT_EQ(failures[0].state, "mixed*");
  EXPECT_EQ(failures[0].reason, "");
  EXPECT_EQ(failures[1].state, "down*");
  EXPECT_EQ(failures[1].reason, "Not responding");
}

// Issue 22, item 20: Slurm's TIMEOUT is the walltime; --wait says so.
TEST(Slurm, TimeoutMeansTheWalltimeWasReached) {
  const auto timeout = slurm().parse_status("JobId=9 JobState=TIMEOUT ExitCode=0:15");
  ASSERT_TRUE(timeout);
  EXPECT_TRUE(timeout->finished);
  EXPECT_TRUE(timeout->walltime_reached);
  EXPECT_FALSE(slurm().parse_status("JobId=9 JobState=FAILED ExitCode=1:0")->walltime_reached);
  EXPECT_FALSE(slurm().parse_status("JobId=9 JobState=CANCELLED ExitCode=0:15")->walltime_reached);
}

// Issue 22, item 22: sbatch's own output goes inside the run directory, with or without run_dir.
TEST(Slurm, TheJobsOutputFileIsInsideTheRunDirectory) {
  JobSpec spec = parse_job_spec("name: x\nsite: slurm\ncommand: [a]\n", "job.yaml");
  const SiteProfile site = testing::builtin_profile("slurm");
  EXPECT_NE(testing::plan_spec(spec, site).script.find("#SBATCH --output=runs/x-%j/x-%j.out\n"),
            std::string::npos);
  spec.run_dir = "out/trial-3";
  EXPECT_NE(testing::plan_spec(spec, site).script.find("#SBATCH --output=out/trial-3/x-%j.out\n"),
            std::string::npos);
}

TEST(SlurmElastic, TheAllocationIsTheJobsNodeList) {
  EXPECT_TRUE(slurm().can_shrink());
  const Allocation a = slurm().allocation({{"SLURM_JOB_NODELIST", "c5n[1-3]"}, {"PATH", "/bin"}});
  EXPECT_EQ(a.nodelist, "c5n[1-3]");
  EXPECT_EQ(a.nodes, (std::vector<std::string>{"c5n1", "c5n2", "c5n3"}));
  // sinfo is asked about the allocation as Slurm wrote it.
  EXPECT_EQ(slurm().lost_nodes_command(a), (Argv{"sinfo", "-h", "-N", "-n", "c5n[1-3]", "-t",
                                                 "down,fail,no_respond,drain", "-o", "%N|%T|%E"}));
  const std::string outside =
      "dtrain: supervise: --min-nodes needs SLURM_JOB_NODELIST (it runs inside a Slurm job)";
  EXPECT_EQ(input_error([] { slurm().allocation({}); }), outside);
  EXPECT_EQ(input_error([] { slurm().allocation({{"SLURM_JOB_NODELIST", ""}}); }), outside);
  const std::string malformed = input_error([] {
    slurm().allocation({{"SLURM_JOB_NODELIST", "c5n[1-3"}});
  });
  EXPECT_NE(malformed.find("SLURM_JOB_NODELIST"), std::string::npos) << malformed;
}

TEST(SlurmElastic, DownFailingAndSilentNodesAreLostDrainedOnesAreNot) {
  // sinfo -h -N -n c5n[1-3] -t down,fail,no_respond,drain -o '%N|%T|%E' (Slurm 22.05) on the
  // namespace cluster, c5n3's slurmd killed under a job: "c5n3|mixed*|none" 10 s later,
  // "c5n3|down*|Not responding" 20 s later; plus a drained node and a failing one.
  std::vector<std::string> lost;
  for (const auto& node : slurm().parse_lost_nodes(
           "c5n2|drained|maintenance\nc5n3|down*|Not responding\nc5n3|down*|Not responding\n"
           "c5n4|mixed*|none\nc5n5|fail|bad dimm\nc5n6|down|admin\n")) {
    lost.push_back(node.name + " " + node.state);
  }
  EXPECT_EQ(lost, (std::vector<std::string>{"c5n3 DOWN", "c5n4 NOT_RESPONDING", "c5n5 FAIL",
                                            "c5n6 DOWN"}));
  EXPECT_TRUE(slurm().parse_lost_nodes("").empty());
}

TEST(SlurmElastic, TheNextSrunRunsOnTheNodesLeftWithTheSameRanksPerNode) {
  const Argv launch = {"srun",
                       "--mpi=pmix",
                       "--nodes=3",
                       "--ntasks-per-node=2",
                       "--kill-on-bad-exit=1",
                       "--dtrain",
                       "/opt/dtrain/bin/dtrain",
                       "run-rank",
                       "--",
                       "./train",
                       "--nodes=3"};
  EXPECT_EQ(slurm().shrink_launch(launch, 2, {"node3"}),
            (Argv{"srun", "--mpi=pmix", "--nodes=2", "--exclude=node3", "--overlap",
                  "--ntasks-per-node=2", "--kill-on-bad-exit=1", "--dtrain",
                  "/opt/dtrain/bin/dtrain", "run-rank", "--", "./train", "--nodes=3"}));
  // From an already shrunk launch: one --exclude, naming every lost node.
  EXPECT_EQ(
      slurm().shrink_launch(slurm().shrink_launch(launch, 2, {"node3"}), 1, {"node2", "node3"}),
      (Argv{"srun", "--mpi=pmix", "--nodes=1", "--exclude=node2,node3", "--overlap",
            "--ntasks-per-node=2", "--kill-on-bad-exit=1", "--dtrain", "/opt/dtrain/bin/dtrain",
            "run-rank", "--", "./train", "--nodes=3"}));
  EXPECT_EQ(slurm().shrink_launch({"/usr/bin/srun", "--nodes=3", "a.out"}, 3, {}),
            (Argv{"/usr/bin/srun", "--nodes=3", "a.out"}));
  // srun would take the batch step's task count over --nodes and --ntasks-per-node.
  EXPECT_EQ(slurm().shrunk_launch_unset(),
            (std::vector<std::string>{"SLURM_NTASKS", "SLURM_NPROCS"}));
}

TEST(SlurmElastic, OnlyAnSrunWithNodesCanShrink) {
  EXPECT_EQ(input_error([] {
              slurm().shrink_launch({"mpirun", "-np", "4", "./train"}, 2, {"n3"});
            }),
            "dtrain: supervise: --min-nodes needs an srun launch to run on fewer nodes, got "
            "\"mpirun\"");
  // --nodes=3 of the program is not srun's.
  EXPECT_EQ(input_error([] {
              slurm().shrink_launch({"srun", "--ntasks=4", "./train", "--nodes=3"}, 2, {});
            }),
            "dtrain: supervise: --min-nodes needs the srun launch's --nodes=N among its options, "
            "found none");
}

}  // namespace
}  // namespace dtrain::plan
