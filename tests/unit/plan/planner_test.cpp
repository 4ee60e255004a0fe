#include "plan/planner.hpp"

#include "golden.hpp"
#include "plan/batch_planner.hpp"
#include "plan/errors.hpp"
#include "plan/site_profile.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace dtrain::plan {
namespace {

using testing::expect_golden;
using testing::read;

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

namespace dtrain::plan {
namespace {

std::string_view template_text(std::string_view name) {
  static std::map<std::string, std::string, std::less<>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(std::string(name), read(DTRAIN_TEMPLATE_DIR "/" + std::string(name))).first;
  }
  return it->second;
}

SiteProfile builtin_profile(const std::string& name) {
  return parse_site_profile(template_text("sites/" + name + ".yaml"), name);
}

class BatchGolden : public ::testing::TestWithParam<std::string> {};

// One spec per site, its script and plan.json reviewed against the site's documented conventions
// (research/site-conventions.md) and kept as golden files.
TEST_P(BatchGolden, ScriptAndPlanJson) {
  const std::string dir = DTRAIN_FIXTURE_DIR "/golden/" + GetParam();
  const JobSpec spec = parse_job_spec(read(dir + "/job.yaml"), "job.yaml");
  const LaunchPlan plan =
      plan_batch(spec, "job.yaml", builtin_profile(spec.site), fixed_inputs(), template_text);
  expect_golden(dir + "/expected.sh", plan.script);
  expect_golden(dir + "/expected.plan.json", plan_to_json(plan).dump(2) + "\n");
  const std::string check = "bash -n '" + dir + "/expected.sh'";
  EXPECT_EQ(std::system(check.c_str()), 0)
      << "bash finds a syntax error in " << dir << "/expected.sh";
}

INSTANTIATE_TEST_SUITE_P(Sites, BatchGolden,
                         ::testing::Values("slurm", "perlmutter", "polaris", "thetagpu", "pbs"));

TEST(PlanBatch, BuiltInProfilesParse) {
  for (const auto& site : builtin_sites()) {
    EXPECT_EQ(builtin_profile(site).name, site);
  }
}

TEST(PlanBatch, MissingRequiredFieldsAreNamed) {
  const JobSpec spec = parse_job_spec("name: x\nsite: polaris\ncommand: [a]\n", "job.yaml");
  try {
    plan_batch(spec, "job.yaml", builtin_profile("polaris"), fixed_inputs(), template_text);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "job.yaml: account: site polaris requires it; expected it in the job spec or "
                 "through --set account=...\n"
                 "job.yaml: walltime: site polaris requires it; expected it in the job spec or "
                 "through --set walltime=...");
  }
}

TEST(PlanBatch, TooManyGpusPerNodeIsAnError) {
  const JobSpec spec = parse_job_spec(
      "name: x\nsite: perlmutter\naccount: a\nwalltime: 10\nranks_per_node: 4\n"
      "gpus_per_rank: 2\ncommand: [a]\n",
      "job.yaml");
  EXPECT_THROW(
      plan_batch(spec, "job.yaml", builtin_profile("perlmutter"), fixed_inputs(), template_text),
      SpecError);
}

TEST(PlanBatch, DefaultsComeFromTheSite) {
  const JobSpec spec = parse_job_spec(
      "name: x\nsite: perlmutter\naccount: a\nwalltime: 10\nnodes: 3\ncommand: [a]\n", "job.yaml");
  const LaunchPlan plan =
      plan_batch(spec, "job.yaml", builtin_profile("perlmutter"), fixed_inputs(), template_text);
  EXPECT_EQ(plan.ranks_per_node, 4);  // the site's GPUs per node
  EXPECT_EQ(plan.world_size(), 12);
  EXPECT_EQ(plan.ranks[5].node, 1);
  EXPECT_EQ(plan.ranks[5].local_rank, 1);
  EXPECT_NE(plan.script.find("#SBATCH --qos=debug\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --cpus-per-task=32\n"), std::string::npos);
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
TEST(PlanBatch, ANameThatIsNotAVariableNeverReachesTheScript) {
  const JobSpec spec =
      parse_job_spec("name: x\nsite: slurm\naccount: a\nwalltime: 10\ncommand: [a]\n", "job.yaml");
  for (const std::string site : {"slurm", "pbs", "polaris", "thetagpu"}) {
    SiteProfile profile = builtin_profile(site);
    profile.env = {{"X;touch /tmp/PWNED;Y", "v"}};
    JobSpec on_site = spec;
    on_site.site = site;
    EXPECT_THROW(plan_batch(on_site, "job.yaml", profile, fixed_inputs(), template_text),
                 std::logic_error)
        << site;
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
