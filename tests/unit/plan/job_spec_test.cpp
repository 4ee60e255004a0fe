#include "plan/job_spec.hpp"

#include <gtest/gtest.h>

#include <string>

#include "plan/errors.hpp"

namespace dtrain::plan {
namespace {

// Every message the user would see for `text`, one per line.
std::string errors_of(const std::string& text) {
  try {
    parse_job_spec(text, "job.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JobSpec, ParsesAFullSpec) {
  const JobSpec spec = parse_job_spec(R"(
name: resnet
site: local
nodes: 1
ranks_per_node: 4
command: [./train, --epochs, "3"]
env:
  NCCL_DEBUG: WARN
  OMP_NUM_THREADS: 2
run_dir: out/run1
)",
                                      "job.yaml");
  EXPECT_EQ(spec.name, "resnet");
  EXPECT_EQ(spec.site, "local");
  EXPECT_EQ(spec.world_size(), 4);
  EXPECT_EQ(spec.command, (std::vector<std::string>{"./train", "--epochs", "3"}));
  ASSERT_EQ(spec.env.size(), 2u);
  EXPECT_EQ(spec.env[0], (std::pair<std::string, std::string>{"NCCL_DEBUG", "WARN"}));
  EXPECT_EQ(spec.env[1], (std::pair<std::string, std::string>{"OMP_NUM_THREADS", "2"}));
  EXPECT_EQ(spec.run_dir, "out/run1");
}

TEST(JobSpec, DefaultsSiteNodesAndRanks) {
  const JobSpec spec = parse_job_spec("name: x\ncommand: [true]\n", "job.yaml");
  EXPECT_EQ(spec.site, "local");
  EXPECT_EQ(spec.nodes, 1);
  EXPECT_EQ(spec.ranks_per_node, 1);
  EXPECT_TRUE(spec.env.empty());
}

TEST(JobSpec, WrongTypeNamesFileLineFieldExpectedAndGot) {
  EXPECT_EQ(errors_of("name: x\ncommand: [a]\nranks_per_node: four\n"),
            "job.yaml:3: ranks_per_node: expected an integer from 1 to 1024, got \"four\"");
  EXPECT_EQ(errors_of("name: x\ncommand: ./train --fast\n"),
            "job.yaml:2: command: expected a list of words such as [\"./train\", \"--epochs\", "
            "\"3\"], got \"./train --fast\"");
  EXPECT_EQ(errors_of("name: [a]\ncommand: [a]\n"),
            "job.yaml:1: name: expected a string, got a list");
}

TEST(JobSpec, OutOfRangeNumbersAreRejected) {
  EXPECT_EQ(errors_of("name: x\ncommand: [a]\nranks_per_node: -2\n"),
            "job.yaml:3: ranks_per_node: expected an integer from 1 to 1024, got \"-2\"");
  EXPECT_EQ(errors_of("name: x\ncommand: [a]\nranks_per_node: 99999999999999999999999\n"),
            "job.yaml:3: ranks_per_node: expected an integer from 1 to 1024, got "
            "\"99999999999999999999999\"");
  EXPECT_EQ(errors_of("name: x\ncommand: [a]\nnodes: 2\n"),
            "job.yaml:3: nodes: expected 1 for site local (it runs on this machine), got 2");
}

TEST(JobSpec, UnknownFieldSuggestsTheClosest) {
  EXPECT_EQ(errors_of("name: x\ncommand: [a]\nrank_per_node: 2\n"),
            "job.yaml:3: rank_per_node: unknown field; did you mean \"ranks_per_node\"?");
  EXPECT_EQ(errors_of("name: x\ncommand: [a]\nqueue_depth: 2\n"),
            "job.yaml:3: queue_depth: unknown field; expected one of: name, site, nodes, "
            "ranks_per_node, command, env, run_dir");
}

TEST(JobSpec, ReportsEveryErrorOfTheFileAtOnce) {
  EXPECT_EQ(errors_of("site: slurmm\nranks_per_node: 0\nenv: {1A: x}\n"),
            "job.yaml:1: site: expected one of: local, got \"slurmm\"\n"
            "job.yaml:2: ranks_per_node: expected an integer from 1 to 1024, got \"0\"\n"
            "job.yaml:3: env.1A: expected a variable name of letters, digits and '_' not starting "
            "with a digit, got \"1A\"\n"
            "job.yaml: name: required field is missing\n"
            "job.yaml: command: required field is missing");
}

TEST(JobSpec, DuplicateFieldsAreErrors) {
  EXPECT_EQ(errors_of("name: x\ncommand: [a]\nname: y\n"),
            "job.yaml:3: name: expected each field once, got it twice");
}

TEST(JobSpec, EnvValuesMustBeScalars) {
  EXPECT_EQ(errors_of("name: x\ncommand: [a]\nenv:\n  A: [1, 2]\n"),
            "job.yaml:4: env.A: expected a string, number or boolean, got a list");
}

TEST(JobSpec, CommandWordsMustBeStrings) {
  EXPECT_EQ(errors_of("name: x\ncommand: [a, [b]]\n"),
            "job.yaml:2: command[1]: expected a string, got a list");
  EXPECT_EQ(errors_of("name: x\ncommand: []\n"),
            "job.yaml:2: command: expected at least one word, got an empty list");
}

TEST(JobSpec, HostileInputGetsAClearErrorNotACrash) {
  EXPECT_EQ(errors_of(""),
            "job.yaml: expected a mapping of job fields (name, command, ...), got an "
            "empty document");
  EXPECT_EQ(errors_of("- a\n- b\n"),
            "job.yaml:1: expected a mapping of job fields (name, command, ...), got a list");
  EXPECT_EQ(errors_of(std::string("name: x\0\x01\x02", 10)),
            "job.yaml: expected YAML text, got binary data (a NUL byte at offset 7)");
  EXPECT_EQ(errors_of(std::string(kMaxSpecBytes + 1, '#')),
            "job.yaml: expected a job spec of at most 1048576 bytes, got 1048577 bytes");
  // Deep nesting must be refused by the parser's depth guard, not overflow the stack.
  const std::string deep = "name: " + std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(errors_of(deep).find("job.yaml:1: invalid YAML"), std::string::npos) << errors_of(deep);
  EXPECT_NE(errors_of("name: [unclosed\n").find("job.yaml:"), std::string::npos);
}

TEST(ClosestMatch, OnlySuggestsNearNames) {
  EXPECT_EQ(closest_match("comand", job_spec_fields()), "command");
  EXPECT_EQ(closest_match("envv", job_spec_fields()), "env");
  EXPECT_EQ(closest_match("zzzzzzzz", job_spec_fields()), "");
}

}  // namespace
}  // namespace dtrain::plan
