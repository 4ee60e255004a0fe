// The local adapter: launch.sh for this machine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "../support.hpp"
#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {
namespace {

using testing::expect_golden_plan;
using testing::fixed_inputs;

LaunchPlan plan_local(const JobSpec& spec, const LocalMachine& machine) {
  PlanInputs inputs = fixed_inputs();
  inputs.machine = machine;
  return testing::plan_spec(spec, testing::builtin_profile("local"), inputs);
}

TEST(PlanLocal, GoldenScriptAndPlanJson) { expect_golden_plan("local"); }

// restarts: mpirun runs under `dtrain supervise`, itself under the walltime's `timeout`.
TEST(PlanLocal, GoldenScriptWithRestarts) { expect_golden_plan("local-restarts"); }

// Setup runs once, before `dtrain supervise` exports each attempt's number: the script's lines up
// to the launch, run by bash as the job runs them (`set -euo pipefail`), see DTRAIN_ATTEMPT=0
// rather than stop at an unbound variable.
TEST(PlanLocal, SetupLinesSeeAttemptZero) {
  JobSpec spec;
  spec.name = "x";
  spec.command = {"true"};
  spec.restarts = 2;
  spec.setup = {"echo \"setup before attempt $DTRAIN_ATTEMPT\""};
  const LaunchPlan plan = plan_local(spec, {"h", 8, false});
  std::string script = plan.script.substr(0, plan.script.find("\nexec "));
  script.replace(script.find("cd '/home/ada/my project'"), 25, "cd /");
  char out_path[] = "/tmp/dtrain-setup-test.XXXXXX";
  const int fd = mkstemp(out_path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::FILE* bash =
      popen(("env -u DTRAIN_ATTEMPT bash > " + std::string(out_path) + " 2>&1").c_str(), "w");
  ASSERT_NE(bash, nullptr);
  std::fwrite(script.data(), 1, script.size(), bash);
  EXPECT_EQ(pclose(bash), 0) << testing::read(out_path);
  EXPECT_EQ(testing::read(out_path), "setup before attempt 0\n") << script;
  unlink(out_path);
}

// Setup lines run as in a plain batch script: an unset variable or a failing command (what
// `conda activate` and site scripts do under -eu) does not stop the job, and the script's own
// options are back after them.
TEST(PlanLocal, SetupLinesRunWithoutTheScriptsOptions) {
  JobSpec spec;
  spec.name = "x";
  spec.command = {"true"};
  spec.setup = {"false", "echo \"unset=[$DTRAIN_NOT_SET_ANYWHERE]\"", "false | true"};
  const LaunchPlan plan = plan_local(spec, {"h", 8, false});
  std::string script = plan.script.substr(0, plan.script.find("\nexec "));
  script.replace(script.find("cd '/home/ada/my project'"), 25, "cd /");
  script += "\n[[ $- == *e* && $- == *u* ]] && shopt -qo pipefail && echo options back\n";
  char out_path[] = "/tmp/dtrain-setup-test.XXXXXX";
  const int fd = mkstemp(out_path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::FILE* bash = popen(("bash > " + std::string(out_path) + " 2>&1").c_str(), "w");
  ASSERT_NE(bash, nullptr);
  std::fwrite(script.data(), 1, script.size(), bash);
  EXPECT_EQ(pclose(bash), 0) << testing::read(out_path);
  EXPECT_EQ(testing::read(out_path), "unset=[]\noptions back\n") << script;
  unlink(out_path);
}

// With a walltime, the local site sends the checkpoint signal `grace` seconds before it, as
// Slurm's --signal does, and exports the signals libdtrain's Preemption saves on.
TEST(PlanLocal, TheCheckpointSignalComesGraceSecondsBeforeTheWalltime) {
  const JobSpec spec = parse_job_spec(
      "name: x\nwalltime: \"00:01:00\"\ncheckpoint: {signal: USR2, grace: 20}\ncommand: [a]\n",
      "job.yaml");
  const LaunchPlan plan = plan_local(spec, {"h", 8, false});
  EXPECT_NE(plan.script.find("\nexec timeout --foreground --signal=TERM --kill-after=30 60 timeout "
                             "--foreground --preserve-status --signal=USR2 40 mpirun "),
            std::string::npos)
      << plan.script;
  EXPECT_NE(plan.script.find(
                "\n# checkpoint: SIGUSR2 to the launch (which passes it on to the ranks) at 40 s,\n"
                "# 20 s before the walltime (60 s), so that they save and stop.\n"),
            std::string::npos)
      << plan.script;
  EXPECT_NE(plan.script.find("\nexport DTRAIN_PREEMPT_SIGNALS=USR2,TERM\n"), std::string::npos)
      << plan.script;
  // Without a walltime there is no end to count back from.
  const LaunchPlan untimed = plan_local(
      parse_job_spec("name: x\ncheckpoint: {}\ncommand: [a]\n", "job.yaml"), {"h", 8, false});
  EXPECT_EQ(untimed.script.find("timeout"), std::string::npos) << untimed.script;
}

// `dtrain submit` sends every job signal to the job's process group, the walltime's `timeout`
// included: it ignores those it does not pass on (the job signals that do not stop the job),
// which would otherwise end it and leave the job unbounded (issue 33, item 6).
TEST(PlanLocal, TheWalltimesTimeoutIgnoresTheSignalsItDoesNotPassOn) {
  const LaunchPlan timed =
      plan_local(parse_job_spec("name: x\nwalltime: \"00:01:00\"\ncommand: [a]\n", "job.yaml"),
                 {"h", 8, false});
  EXPECT_NE(timed.script.find("\ntrap '' USR1 USR2 XCPU URG\n"), std::string::npos) << timed.script;
  EXPECT_LT(timed.script.find("\ntrap '' "), timed.script.find("\nexec timeout ")) << timed.script;
  const LaunchPlan untimed =
      plan_local(parse_job_spec("name: x\ncommand: [a]\n", "job.yaml"), {"h", 8, false});
  EXPECT_EQ(untimed.script.find("trap"), std::string::npos) << untimed.script;
}

TEST(PlanLocal, RankMapCoversEveryRankOnce) {
  JobSpec spec;
  spec.name = "x";
  spec.ranks_per_node = 3;
  spec.command = {"true"};
  const LaunchPlan plan = plan_local(spec, {"h", 8, false});
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
  auto script = plan_local(spec, {"h", 2, false}).script;
  EXPECT_NE(script.find("exec mpirun -n 2 \\"), std::string::npos) << script;
  spec.ranks_per_node = 4;
  script = plan_local(spec, {"h", 2, true}).script;
  EXPECT_NE(script.find("exec mpirun --allow-run-as-root --oversubscribe -n 4 \\"),
            std::string::npos)
      << script;
}

TEST(PlanLocal, NumaBindingIsDroppedWhenRanksOutnumberCores) {
  JobSpec spec;
  spec.name = "x";
  spec.command = {"true"};
  spec.ranks_per_node = 4;
  const LaunchPlan plan = plan_local(spec, {"h", 2, false});
  EXPECT_NE(plan.script.find(" --cpu=none "), std::string::npos) << plan.script;
  EXPECT_EQ(plan.warnings, std::vector<std::string>{
                               "affinity.cpu numa needs a core per rank, and this machine has 2 "
                               "for 4 ranks; the ranks are not bound to cores"});
}

TEST(PlanLocal, SetupModulesAndWalltimeBecomeScriptLines) {
  const JobSpec spec = parse_job_spec(
      "name: x\ncommand: python train.py | tee out\nmodules: [conda/2024]\n"
      "setup: [\"source venv/bin/activate\"]\nwalltime: 10\naccount: proj\n",
      "job.yaml");
  const LaunchPlan plan = plan_local(spec, {"h", 2, false});
  EXPECT_NE(plan.script.find(
                "module load conda/2024\nexport DTRAIN_ATTEMPT=0\nsource venv/bin/activate\n"),
            std::string::npos)
      << plan.script;
  EXPECT_NE(
      plan.script.find("exec timeout --foreground --signal=TERM --kill-after=30 600 mpirun -n 1"),
      std::string::npos)
      << plan.script;
  EXPECT_NE(plan.script.find("-- bash -c 'python train.py | tee out'\n"), std::string::npos);
  EXPECT_EQ(plan.warnings,
            std::vector<std::string>{"site local runs on this machine; ignoring account"});
}

TEST(PlanLocal, RunsHereAndHasNoSchedulerCommands) {
  const SchedulerAdapter& local = *scheduler_adapter("local");
  EXPECT_EQ(local.submission(), Submission::kRunHere);
  try {
    local.submit_held_command("x");
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "dtrain: submit_held_command for scheduler local");
  }
  EXPECT_THROW(local.status_command("1"), std::logic_error);
}

}  // namespace
}  // namespace dtrain::plan
