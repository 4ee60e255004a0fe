#include "plan/scheduler_commands.hpp"

#include <gtest/gtest.h>

namespace dtrain::plan {
namespace {

TEST(SchedulerCommands, SubmitHeldThenReleaseCancelQuery) {
  EXPECT_EQ(submit_held_command(Scheduler::kSlurm, "/r/launch.sh"),
            (Argv{"sbatch", "--hold", "--parsable", "/r/launch.sh"}));
  EXPECT_EQ(submit_held_command(Scheduler::kPbsPro, "/r/launch.sh"),
            (Argv{"qsub", "-h", "/r/launch.sh"}));
  EXPECT_EQ(release_command(Scheduler::kSlurm, "12"), (Argv{"scontrol", "release", "12"}));
  EXPECT_EQ(release_command(Scheduler::kPbs, "12.srv"), (Argv{"qrls", "12.srv"}));
  EXPECT_EQ(cancel_command(Scheduler::kCobalt, "12"), (Argv{"qdel", "12"}));
  EXPECT_EQ(status_command(Scheduler::kSlurm, "12"), (Argv{"scontrol", "show", "job", "-o", "12"}));
  // PBS Pro shows finished jobs only with -x.
  EXPECT_EQ(status_command(Scheduler::kPbsPro, "12.srv"), (Argv{"qstat", "-x", "-f", "12.srv"}));
  EXPECT_THROW(submit_held_command(Scheduler::kLocal, "x"), std::logic_error);
}

TEST(SchedulerCommands, JobIdsAsEachSchedulerPrintsThem) {
  EXPECT_EQ(parse_submitted_job_id(Scheduler::kSlurm, "4350001\n"), "4350001");
  EXPECT_EQ(parse_submitted_job_id(Scheduler::kSlurm, "77;perlmutter\n"), "77");
  EXPECT_EQ(parse_submitted_job_id(Scheduler::kSlurm, "Submitted batch job 5\n"), "5");
  EXPECT_EQ(parse_submitted_job_id(Scheduler::kPbsPro, "1234.polaris-pbs-01.hsn.cm\n"),
            "1234.polaris-pbs-01.hsn.cm");
  EXPECT_EQ(parse_submitted_job_id(Scheduler::kCobalt, "notice: project X\n9876\n"), "9876");
  EXPECT_EQ(job_number("1234.polaris-pbs-01"), "1234");
  try {
    parse_submitted_job_id(Scheduler::kPbs, "qsub: submit error\n");
    FAIL() << "no error";
  } catch (const SubmitError& e) {
    EXPECT_STREQ(e.what(),
                 "expected a job id such as \"123\" or \"123.server\" in the output, got "
                 "\"qsub: submit error\"");
  }
  EXPECT_THROW(parse_submitted_job_id(Scheduler::kSlurm, ""), SubmitError);
}

TEST(SchedulerCommands, SlurmStatesAndExitCodes) {
  auto held = parse_job_status(
      Scheduler::kSlurm,
      "JobId=5 JobName=x UserId=root(0) Priority=0 JobState=PENDING Reason=JobHeldUser "
      "Dependency=(null) ExitCode=0:0 RunTime=00:00:00\n");
  ASSERT_TRUE(held);
  EXPECT_EQ(held->state, "PENDING");
  EXPECT_EQ(held->reason, "JobHeldUser");
  EXPECT_FALSE(held->finished);
  EXPECT_FALSE(held->exit_status);

  auto failed = parse_job_status(Scheduler::kSlurm,
                                 "JobId=5 JobState=FAILED Reason=NonZeroExitCode "
                                 "ExitCode=3:0\n");
  ASSERT_TRUE(failed);
  EXPECT_TRUE(failed->finished);
  EXPECT_EQ(failed->exit_status, 3);
  auto killed = parse_job_status(Scheduler::kSlurm, "JobId=5 JobState=CANCELLED ExitCode=0:9");
  EXPECT_EQ(killed->exit_status, 128 + 9);
  // Cancelled before it ran: no status of its own, still a failure.
  auto cancelled = parse_job_status(Scheduler::kSlurm, "JobId=5 JobState=CANCELLED ExitCode=0:0");
  EXPECT_EQ(cancelled->exit_status, 1);
  auto requeued = parse_job_status(Scheduler::kSlurm, "JobId=5 JobState=REQUEUED ExitCode=85:0");
  EXPECT_FALSE(requeued->finished);
  EXPECT_FALSE(
      parse_job_status(Scheduler::kSlurm, "slurm_load_jobs error: Invalid job id specified\n"));
}

TEST(SchedulerCommands, SlurmNodeFailureNamesTheNodes) {
  auto lost = parse_job_status(Scheduler::kSlurm,
                               "JobId=7 JobState=NODE_FAIL Reason=NodeDown ExitCode=0:0 "
                               "NodeList=node[1-2] BatchHost=node1\n");
  ASSERT_TRUE(lost);
  EXPECT_TRUE(lost->finished);
  EXPECT_TRUE(lost->node_failed);
  EXPECT_EQ(lost->nodes, "node[1-2]");
  EXPECT_EQ(lost->exit_status, 1);
  EXPECT_FALSE(
      parse_job_status(Scheduler::kSlurm, "JobId=7 JobState=FAILED ExitCode=1:0")->node_failed);
  EXPECT_EQ(parse_job_status(Scheduler::kSlurm, "JobId=7 JobState=PENDING NodeList=(null)")->nodes,
            "");
  EXPECT_EQ(failed_nodes_command(Scheduler::kSlurm, "node[1-2]"),
            (Argv{"sinfo", "-h", "-N", "-n", "node[1-2]", "-t", "down,fail,no_respond,drain", "-o",
                  "%N|%E"}));
  EXPECT_TRUE(failed_nodes_command(Scheduler::kPbs, "n1").empty());
  // A node in two partitions is listed twice; "none" is sinfo's empty reason.
  EXPECT_EQ(parse_failed_nodes(Scheduler::kSlurm,
                               "node2|Not responding\nnode2|Not responding\nnode3|none\n\n"),
            (std::vector<std::string>{"node2 (Not responding)", "node3"}));
}

TEST(SchedulerCommands, PbsStates) {
  auto running = parse_job_status(Scheduler::kPbsPro,
                                  "Job Id: 12.srv\n    Job_Name = x\n    job_state = R\n"
                                  "    comment = Job run at Sun Nov 22\n");
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, "R");
  EXPECT_FALSE(running->finished);
  auto finished = parse_job_status(Scheduler::kPbsPro,
                                   "Job Id: 12.srv\n    job_state = F\n    Exit_status = 2\n");
  EXPECT_TRUE(finished->finished);
  EXPECT_EQ(finished->exit_status, 2);
  auto signalled = parse_job_status(Scheduler::kPbsPro, "job_state = F\nExit_status = 271\n");
  EXPECT_EQ(signalled->exit_status, 128 + 15);  // PBS Pro: 256 + signal
  // Torque (and Slurm's Torque wrapper): C, and no Exit_status.
  auto torque = parse_job_status(Scheduler::kPbs, "Job Id:\t7\n\tjob_state = C\n\tqueue = debug\n");
  EXPECT_TRUE(torque->finished);
  EXPECT_FALSE(torque->exit_status);
  EXPECT_FALSE(parse_job_status(Scheduler::kPbs, "qstat: Unknown Job Id 7.srv\n"));
}

TEST(SchedulerCommands, CobaltTable) {
  auto status = parse_job_status(Scheduler::kCobalt,
                                 "JobID  User  WallTime  Nodes  State    Location\n"
                                 "==============================================\n"
                                 "9876   ada   00:10:00  2      running  thetagpu01-02\n");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, "running");
  EXPECT_FALSE(status->finished);
  EXPECT_FALSE(parse_job_status(Scheduler::kCobalt, ""));
}

}  // namespace
}  // namespace dtrain::plan
