// A job spec read as a whole: the document's shape, required and duplicate fields, the checks
// across fields, every problem reported at once, the command line's overrides and the walltime
// grammar. What each field accepts is spec_fields_test.cpp's.
#include "plan/job_spec.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "plan/errors.hpp"
#include "support.hpp"

namespace dtrain::plan {
namespace {

using testing::spec_errors;

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
  EXPECT_EQ(spec.ranks_per_node, 4);
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
  EXPECT_FALSE(spec.ranks_per_node.has_value());
  EXPECT_EQ(spec.ranks_per_node_or(1), 1);
  EXPECT_TRUE(spec.env.empty());
  EXPECT_EQ(spec.framework, launch::Framework::kNone);
  EXPECT_EQ(spec.affinity, affinity::Policy{});
  EXPECT_FALSE(spec.checkpoint.enabled);
}

TEST(JobSpec, WrongTypeNamesFileLineFieldExpectedAndGot) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nranks_per_node: four\n"),
            "job.yaml:3: ranks_per_node: expected an integer from 1 to 1024, got \"four\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: {a: b}\n"),
            "job.yaml:2: command: expected a list of words such as [\"./train\", \"--epochs\", "
            "\"3\"] or a command line string, got a mapping");
  EXPECT_EQ(spec_errors("name: [a]\ncommand: [a]\n"),
            "job.yaml:1: name: expected a string, got a list");
}

TEST(JobSpec, OutOfRangeNumbersAreRejected) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nranks_per_node: -2\n"),
            "job.yaml:3: ranks_per_node: expected an integer from 1 to 1024, got \"-2\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nranks_per_node: 99999999999999999999999\n"),
            "job.yaml:3: ranks_per_node: expected an integer from 1 to 1024, got "
            "\"99999999999999999999999\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nnodes: 2\n"),
            "job.yaml:3: nodes: expected 1 for site local (it runs on this machine), got 2");
}

TEST(JobSpec, RestartsAndTheirBackoff) {
  const JobSpec defaults = parse_job_spec("name: x\ncommand: [a]\n", "job.yaml");
  EXPECT_EQ(defaults.restarts, 0);
  EXPECT_EQ(defaults.restart_backoff_seconds, 10);
  const JobSpec spec =
      parse_job_spec("name: x\ncommand: [a]\nrestarts: 2\nrestart_backoff: 0\n", "job.yaml");
  EXPECT_EQ(spec.restarts, 2);
  EXPECT_EQ(spec.restart_backoff_seconds, 0);
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nrestarts: -1\n"),
            "job.yaml:3: restarts: expected an integer from 0 to 1000, got \"-1\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nrestarts: many\nrestart_backoff: 1.5\n"),
            "job.yaml:3: restarts: expected an integer from 0 to 1000, got \"many\"\n"
            "job.yaml:4: restart_backoff: expected an integer from 0 to 3600, got \"1.5\"");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nsite: k8s\nimage: a/b\nrestarts: 1\n"),
            "job.yaml:5: restarts: expected 0 for site k8s (the MPIJob's pods are restarted by "
            "Kubernetes, not by dtrain), got 1");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nrestart: 1\n"),
            "job.yaml:3: restart: unknown field; did you mean \"restarts\"?");
}

// The elastic range itself is the nodes field's (spec_fields_test.cpp); that it needs restarts is
// a check across fields.
TEST(JobSpec, AnElasticNodeRangeNeedsRestarts) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nsite: slurm\nnodes: 2..3\n"),
            "job.yaml:4: nodes: the elastic range 2..3 needs restarts: 1 or more (a job carries on "
            "with fewer nodes by starting a new attempt), got restarts: 0");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nsite: slurm\nnodes: 2..3\nrestarts: 1\n"),
            "(no error)");
}

TEST(JobSpec, UnknownFieldSuggestsTheClosest) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nrank_per_node: 2\n"),
            "job.yaml:3: rank_per_node: unknown field; did you mean \"ranks_per_node\"?");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nqueue_depth: 2\n"),
            "job.yaml:3: queue_depth: unknown field; expected one of: name, site, nodes, "
            "ranks_per_node, gpus_per_rank, cpus_per_rank, walltime, account, queue, partition, "
            "filesystems, modules, setup, env, site_env, framework, affinity, command, run_dir, "
            "checkpoint, restarts, restart_backoff, records, hang_after, on_hang, directives, "
            "image, namespace");
}

TEST(JobSpec, ReportsEveryErrorOfTheFileAtOnce) {
  EXPECT_EQ(spec_errors("site: slurmm\nranks_per_node: 0\nenv: {1A: x}\n"),
            "job.yaml:1: site: expected one of: local, slurm, perlmutter, polaris, thetagpu, pbs, "
            "k8s, or a site profile file (.yaml), got \"slurmm\" (did you mean \"slurm\"?)\n"
            "job.yaml:2: ranks_per_node: expected an integer from 1 to 1024, got \"0\"\n"
            "job.yaml:3: env.1A: expected a variable name of letters, digits and '_' not starting "
            "with a digit, got \"1A\"\n"
            "job.yaml: name: required field is missing\n"
            "job.yaml: command: required field is missing");
}

TEST(JobSpec, DuplicateFieldsAreErrors) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nname: y\n"),
            "job.yaml:3: name: expected each field once, got it twice");
}

// On batch sites a spec's DTRAIN_RUN_DIR or DTRAIN_JOB_ID replaced the script's own, and the
// job always ended with status 1; on k8s it was dropped with a warning. Refused the same way on
// every site.
TEST(JobSpec, EnvMayNotSetDtrainsOwnVariables) {
  for (const std::string name : {"DTRAIN_RUN_DIR", "DTRAIN_JOB_ID", "DTRAIN_HOSTS", "DTRAIN_RANK",
                                 "DTRAIN_WORLD_SIZE", "DTRAIN_LOCAL_RANK", "DTRAIN_LOCAL_SIZE",
                                 "DTRAIN_CPUSET", "DTRAIN_GPUS", "DTRAIN_NICS", "DTRAIN_ATTEMPT"}) {
    EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nenv: {" + name + ": /elsewhere}\n"),
              "job.yaml:3: env." + name + ": expected a variable of your own, got \"" + name +
                  "\", which dtrain sets for every rank (docs/spec.md, \"What each rank gets\")");
  }
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nenv: {DTRAIN_TIMEOUT: 60}\n"), "(no error)");
}

// Issue 22, item 31: `export EUID=1` stops the job script (bash keeps it read-only), and an
// assignment to RANDOM or SECONDS never reaches the ranks: refused up front, by name.
TEST(JobSpec, EnvMayNotSetVariablesBashReserves) {
  for (const std::string name : {"BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID"}) {
    EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nenv: {" + name + ": 1}\n"),
              "job.yaml:3: env." + name + ": expected a variable the job script can set, got \"" +
                  name + "\", which bash keeps read-only (assigning it stops the job script)");
  }
  for (const std::string name : {"RANDOM", "SECONDS", "GROUPS", "FUNCNAME", "BASHPID", "LINENO"}) {
    EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nenv: {" + name + ": 1}\n"),
              "job.yaml:3: env." + name + ": expected a variable the job script can set, got \"" +
                  name +
                  "\", whose value bash computes itself (an assignment never reaches the "
                  "ranks)");
  }
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nenv: {PATH: /opt/bin, HOME: /h, IFS: x}\n"),
            "(no error)");
  // The same list for every bash-reserved name the job script's shell really refuses.
  for (const std::string name : {"BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID"}) {
    EXPECT_NE(std::system(("bash -c 'export " + name + "=1' 2>/dev/null").c_str()), 0) << name;
  }
}

// A NUL in a key (YAML's "\0" escape) once ended the message there: what() is a C string.
TEST(JobSpec, ANulInAKeyIsShownEscapedNotCutOff) {
  const std::string text = "name: x\ncommand: [a]\nenv: {\"A\\0B\": 1}\naffinity: {\"g\\0\": x}\n";
  const std::string error = spec_errors(text);
  EXPECT_EQ(error,
            "job.yaml:3: env.A\\x00B: expected a variable name of letters, digits and '_' not "
            "starting with a digit, got \"A\\x00B\"\n"
            "job.yaml:4: affinity.g\\x00: unknown field; did you mean \"gpu\"?");
  try {
    parse_job_spec(text, "job.yaml");
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), error);  // the C string holds all of it
  }
}

// plan.json and `plan --json` carry the spec's strings, and JSON holds only UTF-8: invalid bytes
// once passed `plan` and failed `submit` with nlohmann's type_error.316, after making the run
// directory. Every string is checked where the document is read, keys and --set values too.
TEST(JobSpec, TextMustBeUtf8) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [./train, \"--label=\xff\"]\nsetup: [\"echo \xc3\"]\n"),
            "job.yaml:2: command[1]: expected UTF-8 text, got \"--label=\\xff\" (byte \\xff at "
            "offset 8 begins no UTF-8 character)\n"
            "job.yaml:3: setup[0]: expected UTF-8 text, got \"echo \\xc3\" (byte \\xc3 at offset "
            "5 begins no UTF-8 character)");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nenv: {\"A\xed\xa0\x80\": 1}\n"),
            "job.yaml:3: env: expected UTF-8 text, got \"A\\xed\\xa0\\x80\" (byte \\xed at "
            "offset 1 begins no UTF-8 character)");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\n", {{"env.GREETING=caf\xe9"}, "", {}}),
            "--set env.GREETING=caf\\xe9: env.GREETING: expected UTF-8 text, got \"caf\\xe9\" "
            "(byte \\xe9 at offset 3 begins no UTF-8 character)");
  // Well-formed UTF-8 of every length passes.
  EXPECT_EQ(
      spec_errors("name: x\ncommand: [echo, \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\"]\n"),
      "(no error)");
}

TEST(JobSpec, YamlTagsAreRefused) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nimage: !!binary aGVsbG8=\n"),
            "job.yaml:3: image: expected a value without a YAML tag, got the tag !!binary (dtrain "
            "reads every value as the text written)");
}

// yaml-cpp places an empty value at the next token; messages name the key's line.
TEST(JobSpec, AnEmptyValueIsReportedOnItsKeysLine) {
  EXPECT_EQ(spec_errors("name: x\nsite:\ncommand: [a]\n"),
            "job.yaml:2: site: expected a string, got nothing");
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nenv:\n  A:\n\n  B: 1\n"),
            "job.yaml:4: env.A: expected a string, number or boolean, got nothing");
}

TEST(JobSpec, EnvValuesMustBeScalars) {
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\nenv:\n  A: [1, 2]\n"),
            "job.yaml:4: env.A: expected a string, number or boolean, got a list");
}

TEST(JobSpec, HostileInputGetsAClearErrorNotACrash) {
  EXPECT_EQ(spec_errors(""),
            "job.yaml: expected a mapping of job fields (name, command, ...), got an "
            "empty document");
  EXPECT_EQ(spec_errors("- a\n- b\n"),
            "job.yaml:1: expected a mapping of job fields (name, command, ...), got a list");
  EXPECT_EQ(spec_errors(std::string("name: x\0\x01\x02", 10)),
            "job.yaml: expected YAML text, got binary data (a NUL byte at offset 7)");
  EXPECT_EQ(spec_errors(std::string(kMaxSpecBytes + 1, '#')),
            "job.yaml: expected a job spec of at most 1048576 bytes, got 1048577 bytes");
  // Deep nesting must be refused by the parser's depth guard, not overflow the stack.
  const std::string deep = "name: " + std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(spec_errors(deep),
            "job.yaml:1: expected at most 64 levels of nested [ ] or { }, got more");
  std::string deep_block = "name: x\ncommand: [a]\nenv:\n";
  for (int level = 1; level < 1000; ++level) deep_block += std::string(level, ' ') + "k:\n";
  EXPECT_EQ(spec_errors(deep_block),
            "job.yaml:501: expected a job spec nested a few levels deep, got nesting deeper than "
            "the YAML parser's limit of 500 levels");
  EXPECT_NE(spec_errors("name: [unclosed\n").find("job.yaml:"), std::string::npos);
}

TEST(Walltime, AcceptsTheSchedulerFormats) {
  EXPECT_EQ(parse_walltime("90"), 5400);
  EXPECT_EQ(parse_walltime("05:30"), 330);
  EXPECT_EQ(parse_walltime("1:00:00"), 3600);
  EXPECT_EQ(parse_walltime("2-01:00:00"), 2 * 86400 + 3600);
  EXPECT_EQ(parse_walltime("48:00:00"), 48 * 3600);
  EXPECT_FALSE(parse_walltime("1:60:00"));
  EXPECT_FALSE(parse_walltime("0"));
  EXPECT_FALSE(parse_walltime("1-25:00:00"));
  EXPECT_FALSE(parse_walltime("abc"));
  EXPECT_FALSE(parse_walltime(""));
  EXPECT_FALSE(parse_walltime("400-00:00:00"));
  // Found by the fuzzer: huge parts once overflowed the seconds arithmetic.
  EXPECT_FALSE(parse_walltime("00000000000000000841426139107353486:00"));
  EXPECT_FALSE(parse_walltime("9223372036854775807:00:00"));
}

TEST(Overrides, SetFieldsAndNestedFieldsBeforeValidation) {
  const std::string text = "name: x\ncommand: [a]\n";
  const SpecOverrides set{
      {"ranks_per_node=4", "affinity.gpu=identity", "command=[b, c]", "env.A=1"}, "", {}};
  for (const JobSpec& spec : {parse_job_spec(text, "job.yaml", set),
                              parse_job_spec(apply_overrides(text, "job.yaml", set), "job.yaml")}) {
    EXPECT_EQ(spec.ranks_per_node, 4);
    EXPECT_EQ(spec.affinity.gpu, affinity::GpuPolicy::kIdentity);
    EXPECT_EQ(spec.command, (std::vector<std::string>{"b", "c"}));
    ASSERT_EQ(spec.env.size(), 1u);
    EXPECT_EQ(spec.env[0].second, "1");
  }
  EXPECT_THROW(apply_overrides(text, "job.yaml", {{"rank_per_node=4"}, "", {}}), UsageError);
  EXPECT_THROW(parse_job_spec(text, "job.yaml", {{"novalue"}, "", {}}), UsageError);
  EXPECT_EQ(parse_job_spec(text, "job.yaml", {{}, "my site.yaml", {}}).site, "my site.yaml");
}

// Issue 22, item 28: errors name the user's file and line, or the argument that gave the value,
// never a line of the spec as re-emitted with the overrides applied.
TEST(Overrides, ErrorsNameTheUsersLineOrTheArgument) {
  const std::string text =
      "# a comment, then a blank line\n"
      "\n"
      "name: x\n"
      "command: [a]\n"
      "env:\n"
      "  OK: 1\n"
      "affinity: {gpu: sideways}\n";
  const std::string bad_gpu = "job.yaml:7: affinity.gpu: expected one of: ";
  EXPECT_EQ(spec_errors(text).rfind(bad_gpu, 0), 0u) << spec_errors(text);
  const std::string with_site = spec_errors(text, {{}, "polaris", {}});
  EXPECT_EQ(with_site.rfind(bad_gpu, 0), 0u) << with_site;
  const std::string with_set = spec_errors(text, {{"ranks_per_node=2", "env.MORE=x"}, "", {}});
  EXPECT_EQ(with_set.rfind(bad_gpu, 0), 0u) << with_set;
  EXPECT_EQ(spec_errors("name: x\ncommand: [a]\n", {{"ranks_per_node=lots"}, "", {}}),
            "--set ranks_per_node=lots: ranks_per_node: expected an integer from 1 to 1024, got "
            "\"lots\"");
  // Nested: the value's own problems name the argument; the file's keep their lines.
  const std::string nested = spec_errors(text, {{"affinity.cpu=everywhere"}, "", {}});
  EXPECT_NE(nested.find("job.yaml:7: affinity.gpu: "), std::string::npos) << nested;
  EXPECT_NE(nested.find("--set affinity.cpu=everywhere: affinity.cpu: "), std::string::npos)
      << nested;
  EXPECT_NE(spec_errors("name: x\ncommand: [a]\n", {{"command=[a, [b]]"}, "", {}})
                .find("--set command=[a, [b]]: command[1]: "),
            std::string::npos);
}

}  // namespace
}  // namespace dtrain::plan
