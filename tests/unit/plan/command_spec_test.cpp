#include "plan/command_spec.hpp"

#include <gtest/gtest.h>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::plan {
namespace {

TEST(CommandSpec, TheJobIsNamedAfterWhatTheInterpreterRuns) {
  EXPECT_EQ(command_job_name({"python3", "examples/pytorch-ddp/train.py", "--epochs", "1"}),
            "train");
  EXPECT_EQ(command_job_name({"/usr/bin/python3.11", "-u", "train.py"}), "train");
  EXPECT_EQ(command_job_name({"python", "-m", "pkg.mod", "x"}), "pkg.mod");
  EXPECT_EQ(command_job_name({"bash", "run.sh"}), "run");
  EXPECT_EQ(command_job_name({"bash", "-c", "env | sort"}), "bash");
  EXPECT_EQ(command_job_name({"./build/examples/pi", "--samples", "10"}), "pi");
  EXPECT_EQ(command_job_name({"env", "A=1", "./a b+c"}), "abc");
  EXPECT_EQ(command_job_name({"python3"}), "python3");
  EXPECT_EQ(command_job_name({"+++"}), "job");
}

TEST(CommandSpec, TheFlagsBecomeTheSpecAUserWouldWrite) {
  CommandJob job;
  job.command = {"python3", "train.py", "--lr", "1", "null", "it's \"x\""};
  job.ranks_per_node = 2;
  job.nodes = 3;
  job.restarts = 1;
  job.framework = "torch";
  EXPECT_EQ(
      command_spec_text(job),
      "name: train\n"
      "nodes: 3\n"
      "ranks_per_node: 2\n"
      "restarts: 1\n"
      "command: [\"python3\", \"train.py\", \"--lr\", \"1\", \"null\", \"it's \\\"x\\\"\"]\n");
}

TEST(CommandSpec, TheSpecReadsBackAsTheFlagsSaid) {
  CommandJob job;
  job.command = {"python3", "train.py", "yes", "1", "~", "a: b", "[x]", "$HOME", ""};
  job.name = "mine";
  job.site = "slurm";
  job.nodes = 2;
  job.ranks_per_node = 4;
  job.framework = "jax";
  job.restarts = 0;
  const JobSpec spec =
      parse_job_spec(command_spec_text(job), "(flags)", command_spec_overrides(job));
  EXPECT_EQ(spec.name, "mine");
  EXPECT_EQ(spec.site, "slurm");
  EXPECT_EQ(spec.nodes, 2);
  EXPECT_EQ(spec.ranks_per_node, 4);
  EXPECT_EQ(spec.framework, launch::Framework::kJax);
  EXPECT_EQ(spec.restarts, 0);
  EXPECT_EQ(spec.command, job.command);
  EXPECT_FALSE(spec.command_is_shell);
}

TEST(CommandSpec, ABadWordIsNamedWithItsFlag) {
  CommandJob job;
  job.command = {"./pi"};
  job.framework = "torchy";
  job.name = "a b";
  try {
    parse_job_spec(command_spec_text(job), "(flags)", command_spec_overrides(job));
    FAIL() << "no error";
  } catch (const SpecError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("--name a b: name: expected 1 to 64 letters"), std::string::npos) << text;
    EXPECT_NE(text.find("--framework torchy: framework: "), std::string::npos) << text;
  }
}

TEST(CommandSpec, UnsetFlagsLeaveTheSpecsDefaults) {
  CommandJob job;
  job.command = {"./pi"};
  EXPECT_EQ(command_spec_text(job), "name: pi\ncommand: [\"./pi\"]\n");
}

}  // namespace
}  // namespace dtrain::plan
