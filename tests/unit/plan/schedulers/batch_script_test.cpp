// What the batch-script adapters share: the run directory named after the job id, the warning
// for Kubernetes-only fields, Open MPI's launcher line, the requeue lines, job-id parsing.
#include "plan/schedulers/batch_script.hpp"

#include <gtest/gtest.h>

#include "../support.hpp"
#include "plan/errors.hpp"

namespace dtrain::plan {
namespace {

using testing::builtin_profile;
using testing::fixed_inputs;
using testing::plan_spec;

TEST(BatchScript, RunDirectoryIsNamedAfterTheJobIdUnlessTheSpecNamesOne) {
  JobSpec spec = parse_job_spec("name: pi\nsite: pbs\ncommand: [a]\n", "job.yaml");
  LaunchPlan plan = plan_spec(spec, builtin_profile("pbs"));
  EXPECT_EQ(plan.run_dir, "/home/ada/my project/runs/pi-<job id>");
  EXPECT_EQ(plan.job_id, "");
  EXPECT_NE(plan.script.find("export DTRAIN_RUN_DIR='/home/ada/my project/runs/pi-'\"${"
                             "DTRAIN_JOB_ID}\"\n"),
            std::string::npos)
      << plan.script;
  spec.run_dir = "/scratch/pi";
  PlanInputs inputs = fixed_inputs();
  inputs.run_dir = "/scratch/pi";
  plan = plan_spec(spec, builtin_profile("pbs"), inputs);
  EXPECT_EQ(plan.run_dir, "/scratch/pi");
  EXPECT_NE(plan.script.find("export DTRAIN_RUN_DIR=/scratch/pi\n"), std::string::npos);
}

TEST(BatchScript, KubernetesFieldsAreNamedInWarnings) {
  const JobSpec spec =
      parse_job_spec("name: x\nsite: slurm\nimage: a/b\nnamespace: ns\ncommand: [a]\n", "job.yaml");
  EXPECT_EQ(plan_spec(spec, builtin_profile("slurm")).warnings,
            (std::vector<std::string>{"site slurm runs no containers; ignoring image",
                                      "site slurm runs no containers; ignoring namespace"}));
}

TEST(BatchScript, MpirunForwardsTheJobsVariablesAndThePreemptionSignals) {
  const JobSpec spec = parse_job_spec(
      "name: x\nsite: pbs\nnodes: 2\nranks_per_node: 3\nenv: {A: 1}\nsite_env: false\n"
      "checkpoint: {signal: USR1, grace: 60, requeue: true}\ncommand: [a]\n",
      "job.yaml");
  const std::string script = plan_spec(spec, builtin_profile("pbs")).script;
  EXPECT_NE(script.find("launch=(mpirun -np 6 -npernode 3 --hostfile \"$PBS_NODEFILE\" -x PATH -x "
                        "LD_LIBRARY_PATH -x DTRAIN_JOB_ID -x DTRAIN_RUN_DIR -x DTRAIN_HOSTS -x "
                        "DTRAIN_PREEMPT_SIGNALS -x A "),
            std::string::npos)
      << script;
  // A rank that saved and exited kExitRequeue puts the job back in the queue: as a continuation
  // any user may submit (qrerun needs operator privileges), into the same run directory.
  EXPECT_NE(script.find("if [[ $status -eq 85 ]]; then\n  # Submit this script again"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("\n  qsub -W depend=afterany:\"$PBS_JOBID\" -v "
                        "DTRAIN_REQUEUED_JOB_ID=\"$DTRAIN_JOB_ID\" \"$DTRAIN_RUN_DIR\"/launch.sh\n"
                        "  exit 0\nfi\n"),
            std::string::npos)
      << script;
  EXPECT_EQ(script.find("qrerun"), std::string::npos) << script;
  EXPECT_NE(script.find("\nexport DTRAIN_JOB_ID=\"${DTRAIN_REQUEUED_JOB_ID:-${PBS_JOBID%%.*}}\"\n"),
            std::string::npos)
      << script;
}

// PBS sends nothing before the walltime: the script's timeout sends the checkpoint signal
// `grace` seconds before it, counting the setup's time; without a walltime the plan says none
// comes.
TEST(BatchScript, TheScriptSendsTheCheckpointSignalWhereTheSchedulerDoesNot) {
  const std::string text =
      "name: x\nsite: pbs\nsite_env: false\ncheckpoint: {signal: USR2, grace: 120}\n"
      "command: [a]\n";
  const LaunchPlan timed = plan_spec(parse_job_spec(text + "walltime: \"00:30:00\"\n", "job.yaml"),
                                     builtin_profile("pbs"));
  EXPECT_NE(timed.script.find("\ntimeout --foreground --preserve-status --signal=USR2 "
                              "\"$((1680 > SECONDS ? 1680 - SECONDS : 1))\" \"${launch[@]}\" &\n"),
            std::string::npos)
      << timed.script;
  EXPECT_NE(timed.script.find("# checkpoint: Torque/PBS sends no signal before the walltime "
                              "(SIGTERM at it, then SIGKILL).\n# `timeout` sends SIGUSR2 120 s "
                              "before it instead: 1680 s into the job"),
            std::string::npos)
      << timed.script;
  EXPECT_TRUE(timed.warnings.empty());

  const LaunchPlan untimed = plan_spec(parse_job_spec(text, "job.yaml"), builtin_profile("pbs"));
  EXPECT_EQ(untimed.script.find("timeout "), std::string::npos) << untimed.script;
  EXPECT_EQ(untimed.warnings,
            (std::vector<std::string>{
                "checkpoint.grace: Torque/PBS sends no signal before the walltime (SIGTERM at it, "
                "then SIGKILL), and the spec sets no walltime to count from; no SIGUSR2 comes "
                "before the end (set walltime to have the job script send it)"}));

  // Slurm sends it itself (--signal): no timer.
  const LaunchPlan slurm =
      plan_spec(parse_job_spec("name: x\nsite: slurm\nwalltime: 30\ncheckpoint: {}\ncommand: [a]\n",
                               "job.yaml"),
                builtin_profile("slurm"));
  EXPECT_EQ(slurm.script.find("timeout "), std::string::npos) << slurm.script;
  EXPECT_NE(slurm.script.find("# checkpoint: the scheduler sends SIGUSR1 120 s before the end.\n"),
            std::string::npos)
      << slurm.script;
}

TEST(BatchScript, AGraceAsLongAsTheWalltimeIsRefused) {
  const JobSpec spec = parse_job_spec(
      "name: x\nsite: pbs\nwalltime: \"00:02:00\"\ncheckpoint: {grace: 120}\ncommand: [a]\n",
      "job.yaml");
  try {
    plan_spec(spec, builtin_profile("pbs"));
    FAIL() << "planned";
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "job.yaml: checkpoint.grace: expected fewer seconds than the walltime (120), "
                 "got 120");
  }
}

// The qsub schedulers' output goes to the run directory, named as Slurm's --output names it.
TEST(BatchScript, OutputGoesToTheRunDirectory) {
  for (const char* site : {"pbs", "polaris", "thetagpu"}) {
    const JobSpec spec = parse_job_spec(
        std::string("name: my-job\nsite: ") + site + "\naccount: a\nwalltime: 30\ncommand: [a]\n",
        "job.yaml");
    const std::string script = plan_spec(spec, builtin_profile(site)).script;
    const auto mkdir = script.find("\nmkdir -p \"$DTRAIN_RUN_DIR\"\n");
    const auto exec =
        script.find("\nexec >>\"$DTRAIN_RUN_DIR\"/my-job-\"$DTRAIN_JOB_ID\".out 2>&1\n");
    ASSERT_NE(exec, std::string::npos) << site << script;
    EXPECT_LT(mkdir, exec) << site;
  }
  const std::string slurm =
      plan_spec(parse_job_spec("name: my-job\nsite: slurm\ncommand: [a]\n", "job.yaml"),
                builtin_profile("slurm"))
          .script;
  EXPECT_EQ(slurm.find("exec >>"), std::string::npos) << slurm;
}

// With restarts, the launch runs under `dtrain supervise` and each attempt's number reaches the
// ranks on every node; without, the script does not change (the goldens).
TEST(BatchScript, RestartsSuperviseTheLaunchAndForwardTheAttempt) {
  const JobSpec spec = parse_job_spec(
      "name: x\nsite: pbs\nnodes: 2\nsite_env: false\nrestarts: 2\ncommand: [a]\n", "job.yaml");
  const std::string script = plan_spec(spec, builtin_profile("pbs")).script;
  EXPECT_NE(script.find("-x DTRAIN_HOSTS -x DTRAIN_ATTEMPT "), std::string::npos) << script;
  EXPECT_NE(script.find("\n/opt/dtrain/bin/dtrain supervise --restarts 2 --backoff 10 -- "
                        "\"${launch[@]}\" || status=$?\n"),
            std::string::npos)
      << script;
  const JobSpec plain =
      parse_job_spec("name: x\nsite: pbs\nnodes: 2\nsite_env: false\ncommand: [a]\n", "job.yaml");
  const std::string plain_script = plan_spec(plain, builtin_profile("pbs")).script;
  EXPECT_EQ(plain_script.find("DTRAIN_ATTEMPT"), std::string::npos);
  EXPECT_EQ(plain_script.find("supervise"), std::string::npos);
}

TEST(BatchScript, Helpers) {
  EXPECT_EQ(hh_mm_ss(90061), "25:01:01");
  EXPECT_EQ(join({"a", "b"}, ":"), "a:b");
  EXPECT_EQ(prefixed({"-n 1", "-t 2"}, "#COBALT "),
            (std::vector<std::string>{"#COBALT -n 1", "#COBALT -t 2"}));
  EXPECT_EQ(to_int("12"), 12);
  EXPECT_FALSE(to_int("12x"));
  auto as_is = [](std::string_view id) { return id; };
  EXPECT_EQ(parse_job_id_line("  notice\n 42.srv \n", as_is, "\"123\""), "42.srv");
  try {
    parse_job_id_line("no id here\n", as_is, "\"123\"");
    FAIL() << "no error";
  } catch (const SubmitError& e) {
    EXPECT_STREQ(e.what(), "expected a job id such as \"123\" in the output, got \"no id here\"");
  }
}

// Issue 22, item 31: every walltime the spec accepts is rendered in a form the spec reads back as
// the same seconds, the longest (366 days, "366-00:00:00" for Slurm) included.
TEST(BatchScript, WalltimeRoundTrip) {
  for (long s : {1L, 59L, 60L, 3599L, 3600L, 86399L, 86400L, 86401L, 90061L, 365L * 86400 + 1,
                 366L * 86400 - 1, 366L * 86400}) {
    SCOPED_TRACE(s);
    EXPECT_EQ(parse_walltime(slurm_time(s)), s) << slurm_time(s);
    EXPECT_EQ(parse_walltime(hh_mm_ss(s)), s) << hh_mm_ss(s);
  }
  EXPECT_EQ(slurm_time(366L * 86400), "366-00:00:00");
  EXPECT_EQ(parse_walltime("366-00:00:00"), 366L * 86400);
  EXPECT_FALSE(parse_walltime("366-00:00:01"));  // past the limit
  EXPECT_FALSE(parse_walltime("367-00:00:00"));
}

}  // namespace
}  // namespace dtrain::plan
