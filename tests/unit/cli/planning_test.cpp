// The CLI's planning entry point (planning.cpp) on a spec file in a temporary directory: --site
// and --set change the spec before it is parsed, a relative run_dir becomes absolute, and a
// missing spec file or an unknown site is refused with a message naming it.
#include "planning.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "../support/scratch_dir.hpp"
#include "common/input_file.hpp"
#include "plan/errors.hpp"

namespace dtrain::cli {
namespace {
namespace fs = std::filesystem;

class Planning : public test_support::ScratchDirTest {
 protected:
  Planning() : ScratchDirTest("dtrain-planning-test-") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    spec_ = (dir_ / "job.yaml").string();
    std::ofstream(spec_) << "name: resnet\n"
                            "site: slurm\n"
                            "nodes: 2\n"
                            "ranks_per_node: 4\n"
                            "command: [./train, --epochs, \"3\"]\n"
                            "run_dir: /scratch/resnet-run\n";
  }

  std::string spec_;
};

TEST_F(Planning, PlansTheSpecAsWritten) {
  const PlannedJob job = plan_from_file(spec_, "", {});
  EXPECT_EQ(job.spec.name, "resnet");
  EXPECT_EQ(job.site.name, "slurm");
  EXPECT_EQ(job.plan.site, "slurm");
  EXPECT_EQ(job.plan.nodes, 2);
  EXPECT_EQ(job.plan.ranks_per_node, 4);
  EXPECT_EQ(job.plan.run_dir, "/scratch/resnet-run");
  EXPECT_EQ(job.plan.command, (std::vector<std::string>{"./train", "--epochs", "3"}));
}

TEST_F(Planning, SiteAndSetOverrideTheSpec) {
  const PlannedJob job = plan_from_file(spec_, "pbs", {"nodes=3", "ranks_per_node=1"});
  EXPECT_EQ(job.spec.site, "pbs");
  EXPECT_EQ(job.site.name, "pbs");
  EXPECT_EQ(job.plan.site, "pbs");
  EXPECT_EQ(job.spec.nodes, 3);
  EXPECT_EQ(job.plan.nodes, 3);
  EXPECT_EQ(job.plan.ranks_per_node, 1);
  // The run directory keeps the overridden text as job.yaml: it parses to the same values.
  const PlannedJob again = plan_from_file(spec_, "pbs", {"nodes=3", "ranks_per_node=1"});
  EXPECT_EQ(again.spec_text, job.spec_text);
  EXPECT_NE(job.spec_text.find("nodes: 3"), std::string::npos) << job.spec_text;
}

TEST_F(Planning, AnOverrideIsValidatedLikeTheFile) {
  try {
    plan_from_file(spec_, "", {"nodes=zero"});
    FAIL() << "no error";
  } catch (const plan::SpecError& e) {
    // The value came from the command line: the message names the argument, not a line.
    EXPECT_EQ(std::string(e.what()),
              "--set nodes=zero: nodes: expected an integer from 1 to 100000, got \"zero\"");
  }
}

// Issue 22, item 28: with --site or --set, an error in the file still names the file's own line
// (the overrides were once applied to re-emitted YAML, whose lines lose the comments and blank
// lines, and reported there).
TEST_F(Planning, AnErrorInTheFileKeepsItsLineWithSiteAndSet) {
  std::ofstream(spec_) << "# ResNet on two nodes\n"
                          "\n"
                          "name: resnet   # the run directory's name\n"
                          "site: slurm\n"
                          "\n"
                          "command: [./train]\n"
                          "affinity:\n"
                          "  gpu: nearest\n";
  const std::string expected = spec_ + ":8: affinity.gpu: expected one of: ";
  for (const auto& [site, set] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"", {}},
           {"pbs", {}},
           {"", {"nodes=2"}},
           {"polaris", {"env.A=1", "ranks_per_node=2"}}}) {
    SCOPED_TRACE("--site " + site + ", " + std::to_string(set.size()) + " --set");
    try {
      plan_from_file(spec_, site, set);
      FAIL() << "no error";
    } catch (const plan::SpecError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << e.what();
    }
  }
}

TEST_F(Planning, AMissingSpecFileIsNamed) {
  const std::string missing = (dir_ / "missing.yaml").string();
  try {
    plan_from_file(missing, "", {});
    FAIL() << "no error";
  } catch (const dtrain::InputFileError& e) {
    EXPECT_EQ(std::string(e.what()), "dtrain: " + missing +
                                         ": cannot open it: No such file or directory; expected "
                                         "a job spec (YAML)");
  }
}

TEST_F(Planning, AnUnknownSiteIsNamed) {
  const std::string site = (dir_ / "nowhere.yaml").string();
  try {
    plan_from_file(spec_, site, {});
    FAIL() << "no error";
  } catch (const dtrain::InputFileError& e) {
    EXPECT_EQ(std::string(e.what()), "dtrain: " + site +
                                         ": cannot open it: No such file or directory; expected "
                                         "a site profile (.yaml) or a built-in site");
  }
}

// `dtrain supervise --min-nodes` asks the scheduler the job was planned for: the site of the run
// directory's job.yaml (what `dtrain submit` wrote there, overrides applied).
TEST_F(Planning, ARunDirectoryNamesTheSchedulerItsJobWasPlannedFor) {
  const fs::path run = dir_ / "run";
  fs::create_directory(run);
  const auto job_yaml = [&](const std::string& site) {
    std::ofstream(run / "job.yaml") << "name: resnet\nsite: " << site << "\ncommand: [./train]\n";
  };
  job_yaml("polaris");
  EXPECT_EQ(planned_scheduler(run.string()).name(), "pbspro");
  job_yaml("slurm");
  EXPECT_EQ(planned_scheduler(run.string()).name(), "slurm");
  // A user's own profile, by a path relative to the submit directory the job script runs in.
  std::ofstream(dir_ / "mine.yaml") << "name: mine\nscheduler: pbs\nlauncher: mpirun\n";
  job_yaml("mine.yaml");
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  EXPECT_EQ(planned_scheduler("run").name(), "pbs");
  fs::current_path(before);
  fs::remove(run / "job.yaml");
  try {
    planned_scheduler(run.string());
    FAIL() << "a run directory without job.yaml named a scheduler";
  } catch (const dtrain::InputFileError& e) {
    EXPECT_EQ(std::string(e.what()), "dtrain: " + (run / "job.yaml").string() +
                                         ": cannot open it: No such file or directory; expected "
                                         "a job spec (YAML)");
  }
}

}  // namespace
}  // namespace dtrain::cli
