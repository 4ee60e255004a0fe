// The shared plan skeleton: the job's shape on a site, the environment and its order, the default
// run directory, the adapter registry. What one scheduler does is in schedulers/<name>_test.cpp.
#include "plan/planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "plan/errors.hpp"
#include "plan/schedulers/scheduler.hpp"
#include "plan/site_profile.hpp"
#include "support.hpp"

namespace dtrain::plan {
namespace {

using testing::builtin_profile;
using testing::fixed_inputs;
using testing::plan_spec;

TEST(Plan, UserStringsAreQuotedAndOurVariablesComeLast) {
  JobSpec spec;
  spec.name = "x";
  spec.command = {"./train", "$(touch /tmp/x)"};
  spec.env = {{"DTRAIN_RUN_DIR", "/elsewhere"}, {"MSG", "it's"}};
  const auto plan = plan_spec(spec, builtin_profile("local"));
  EXPECT_NE(plan.script.find("-- ./train '$(touch /tmp/x)'\n"), std::string::npos) << plan.script;
  EXPECT_NE(plan.script.find("export MSG='it'\\''s'\n"), std::string::npos);
  const auto user = plan.script.find("export DTRAIN_RUN_DIR=/elsewhere");
  const auto ours = plan.script.find("export DTRAIN_RUN_DIR=/home/ada/runs/pi-20261122-100000-42");
  ASSERT_NE(user, std::string::npos);
  ASSERT_NE(ours, std::string::npos);
  EXPECT_LT(user, ours);
}

// Site env, then the spec's, then dtrain's own, on every scheduler; site_env: false drops the
// site's.
TEST(Plan, EnvironmentIsSiteThenSpecThenDtrain) {
  JobSpec spec = parse_job_spec("name: x\ncommand: [a]\nenv: {MINE: 1}\n", "job.yaml");
  SiteProfile local = builtin_profile("local");
  local.env = {{"SITE", "s"}};
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(plan_spec(spec, local).env,
            (Env{{"SITE", "s"},
                 {"MINE", "1"},
                 {"PYTHONUNBUFFERED", "1"},
                 {"DTRAIN_JOB_ID", "20261122-100000-42"},
                 {"DTRAIN_RUN_DIR", "/home/ada/runs/pi-20261122-100000-42"}}));
  spec.site_env = false;
  EXPECT_EQ(plan_spec(spec, local).env.front(), (std::pair<std::string, std::string>{"MINE", "1"}));
  spec.site = "pbs";
  spec.site_env = true;
  SiteProfile pbs = builtin_profile("pbs");
  pbs.env = {{"SITE", "s"}};
  EXPECT_EQ(plan_spec(spec, pbs).env,
            (Env{{"SITE", "s"}, {"MINE", "1"}, {"PYTHONUNBUFFERED", "1"}}));
}

// Python block-buffers a pipe, so a rank's lines would carry the time of the flush and a hung
// rank's last lines would never reach its log: ranks get PYTHONUNBUFFERED=1, unless the spec or
// the site set it, on every scheduler.
TEST(Plan, PythonIsUnbufferedUnlessTheUserSaysOtherwise) {
  using Env = std::vector<std::pair<std::string, std::string>>;
  JobSpec spec = parse_job_spec(
      "name: x\ncommand: [a]\naccount: a\nwalltime: 10\nfilesystems: [home]\nimage: i\n",
      "job.yaml");
  for (const auto& site : builtin_sites()) {
    SiteProfile profile = builtin_profile(site);
    spec.site = site;
    const auto plan = plan_spec(spec, profile);
    EXPECT_EQ(std::count(plan.env.begin(), plan.env.end(),
                         std::pair<std::string, std::string>{"PYTHONUNBUFFERED", "1"}),
              1)
        << site;
    if (profile.scheduler != "kubernetes") {
      EXPECT_NE(plan.script.find("export PYTHONUNBUFFERED=1\n"), std::string::npos) << site;
    }
  }
  spec = parse_job_spec("name: x\ncommand: [a]\nenv: {PYTHONUNBUFFERED: \"\"}\n", "job.yaml");
  SiteProfile local = builtin_profile("local");
  EXPECT_EQ(plan_spec(spec, local).env.front(),
            (std::pair<std::string, std::string>{"PYTHONUNBUFFERED", ""}));
  EXPECT_EQ(plan_spec(spec, local).env.size(), 3u);
  spec = parse_job_spec("name: x\ncommand: [a]\n", "job.yaml");
  local.env = {{"PYTHONUNBUFFERED", "0"}};
  EXPECT_EQ(plan_spec(spec, local).env,
            (Env{{"PYTHONUNBUFFERED", "0"},
                 {"DTRAIN_JOB_ID", "20261122-100000-42"},
                 {"DTRAIN_RUN_DIR", "/home/ada/runs/pi-20261122-100000-42"}}));
}

TEST(Plan, DefaultRunDirectoryIsUnderTheSubmitDirectory) {
  EXPECT_EQ(default_run_dir("/home/ada", "pi", "7"), "/home/ada/runs/pi-7");
}

TEST(SiteProfile, BuiltInProfilesParse) {
  for (const auto& site : builtin_sites()) {
    EXPECT_EQ(builtin_profile(site).name, site);
  }
}

TEST(JobShape, MissingRequiredFieldsAreNamed) {
  const JobSpec spec = parse_job_spec("name: x\nsite: polaris\ncommand: [a]\n", "job.yaml");
  try {
    plan_spec(spec, builtin_profile("polaris"));
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "job.yaml: account: site polaris requires it; expected it in the job spec or "
                 "through --set account=...\n"
                 "job.yaml: walltime: site polaris requires it; expected it in the job spec or "
                 "through --set walltime=...");
  }
}

TEST(JobShape, TooManyGpusPerNodeIsAnError) {
  const JobSpec spec = parse_job_spec(
      "name: x\nsite: perlmutter\naccount: a\nwalltime: 10\nranks_per_node: 4\n"
      "gpus_per_rank: 2\ncommand: [a]\n",
      "job.yaml");
  EXPECT_THROW(plan_spec(spec, builtin_profile("perlmutter")), SpecError);
}

TEST(JobShape, DefaultsComeFromTheSite) {
  const JobSpec spec = parse_job_spec(
      "name: x\nsite: perlmutter\naccount: a\nwalltime: 10\nnodes: 3\ncommand: [a]\n", "job.yaml");
  const LaunchPlan plan = plan_spec(spec, builtin_profile("perlmutter"));
  EXPECT_EQ(plan.ranks_per_node, 4);  // the site's GPUs per node
  EXPECT_EQ(plan.world_size(), 12);
  EXPECT_EQ(plan.ranks[5].node, 1);
  EXPECT_EQ(plan.ranks[5].local_rank, 1);
  EXPECT_NE(plan.script.find("#SBATCH --qos=debug\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --cpus-per-task=32\n"), std::string::npos);
}

// Only Slurm can carry on with fewer nodes (dtrain supervise asks sinfo which are lost).
TEST(JobShape, AnElasticRangeOnASiteThatCannotShrinkIsRefused) {
  const auto refusal = [](const std::string& site, const std::string& extra) {
    const JobSpec spec = parse_job_spec(
        "name: x\ncommand: [a]\nnodes: 2..3\nrestarts: 1\nsite: " + site + "\n" + extra,
        "job.yaml");
    try {
      plan_spec(spec, builtin_profile(site));
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(refusal("local", ""),
            "job.yaml: nodes: expected a node count on site local (scheduler local), got the "
            "elastic range 2..3: only Slurm jobs carry on with fewer nodes so far");
  EXPECT_EQ(refusal("pbs", "walltime: 10\n"),
            "job.yaml: nodes: expected a node count on site pbs (scheduler pbs), got the "
            "elastic range 2..3: only Slurm jobs carry on with fewer nodes so far");
  EXPECT_EQ(refusal("thetagpu", "walltime: 10\naccount: a\n"),
            "job.yaml: nodes: expected a node count on site thetagpu (scheduler cobalt), got the "
            "elastic range 2..3: only Slurm jobs carry on with fewer nodes so far");
  EXPECT_EQ(refusal("slurm", ""), "(no error)");
}

std::string profile_errors(const std::string& text) {
  try {
    parse_site_profile(text, "my.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

// A profile's env names reached `export NAME=...` and mpirun's -x unchecked: a key could run
// commands in the job script on every batch site.
TEST(SiteProfile, EnvNamesAreCheckedLikeTheSpecs) {
  for (const std::string scheduler : {"local", "slurm", "pbspro", "pbs", "cobalt"}) {
    EXPECT_EQ(profile_errors("name: x\nscheduler: " + scheduler +
                             "\nlauncher: mpirun\nenv:\n  \"X;touch /tmp/PWNED;Y\": v\n"),
              "my.yaml:5: env.X;touch /tmp/PWNED;Y: expected a variable name of letters, digits "
              "and '_' not starting with a digit, got \"X;touch /tmp/PWNED;Y\"")
        << scheduler;
  }
  EXPECT_EQ(profile_errors("name: x\nscheduler: slurm\nlauncher: srun\nenv:\n  \"A\\nB\": v\n"),
            "my.yaml:5: env: expected a variable name of letters, digits and '_' not starting "
            "with a digit, got \"A\\x0aB\"");
  EXPECT_EQ(profile_errors("name: x\nscheduler: slurm\nlauncher: srun\nenv: {A: 1, A: 2}\n"),
            "my.yaml:4: env.A: expected each variable once, got it twice");
  EXPECT_EQ(profile_errors("name: x\nscheduler: slurm\nlauncher: srun\nenv: {A: [1]}\n"),
            "my.yaml:4: env.A: expected a string, number or boolean, got a list");
}

TEST(SiteProfile, EnvMayNotSetDtrainsOwnVariables) {
  EXPECT_EQ(profile_errors("name: x\nscheduler: pbs\nlauncher: mpirun\nenv: {DTRAIN_JOB_ID: 7}\n"),
            "my.yaml:4: env.DTRAIN_JOB_ID: expected a variable of your own, got "
            "\"DTRAIN_JOB_ID\", which dtrain sets for every rank (docs/spec.md, \"What each rank "
            "gets\")");
}

// The readers refuse such names; a planner handed one anyway (a new caller) must not write it.
TEST(JobShape, ANameThatIsNotAVariableNeverReachesTheScript) {
  const JobSpec spec =
      parse_job_spec("name: x\nsite: slurm\naccount: a\nwalltime: 10\ncommand: [a]\n", "job.yaml");
  for (const std::string site : {"slurm", "pbs", "polaris", "thetagpu"}) {
    SiteProfile profile = builtin_profile(site);
    profile.env = {{"X;touch /tmp/PWNED;Y", "v"}};
    JobSpec on_site = spec;
    on_site.site = site;
    EXPECT_THROW(plan_spec(on_site, profile), std::logic_error) << site;
  }
}

TEST(SiteProfile, StrictLikeTheSpec) {
  try {
    parse_site_profile("name: x\nscheduler: pbspro\nlauncher: srun\ngpu_per_node: 4\n", "my.yaml");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "my.yaml:4: gpu_per_node: unknown field; did you mean \"gpus_per_node\"?\n"
                 "my.yaml:3: launcher: launcher srun is not supported with scheduler pbspro");
  }
}

}  // namespace
}  // namespace dtrain::plan
