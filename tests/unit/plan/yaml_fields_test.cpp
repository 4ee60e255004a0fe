// The shared pieces of the YAML readers (yaml_fields.cpp/.hpp): what each field reader accepts,
// the exact message it records otherwise (file, line, field path), the did-you-mean suggestion and
// the limits load_yaml puts on a file before parsing it.
#include "plan/yaml_fields.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::plan {
namespace {

using detail::Collector;
using detail::Reader;

// Runs `read` against `yaml` (parsed as the document of "f.yaml") and returns every recorded
// message, one per line, or "(no error)".
std::string errors_of(const std::string& yaml,
                      const std::function<void(Reader&, const YAML::Node&)>& read) {
  Collector errors("f.yaml");
  Reader reader{errors};
  read(reader, YAML::Load(yaml));
  if (errors.empty()) return "(no error)";
  try {
    errors.raise();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(raise did not throw)";
}

std::string load_error(const std::string& text, std::size_t max_bytes = 1000) {
  Collector errors("f.yaml");
  try {
    detail::load_yaml(text, max_bytes, "a job spec", errors);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ClosestMatch, OnlySuggestsNearNames) {
  EXPECT_EQ(closest_match("comand", job_spec_fields()), "command");
  EXPECT_EQ(closest_match("envv", job_spec_fields()), "env");
  EXPECT_EQ(closest_match("zzzzzzzz", job_spec_fields()), "");
}

TEST(ClosestMatch, AllowsTwoEditsOrAThirdOfTheWord) {
  const std::vector<std::string> names = {"ranks_per_node", "nodes"};
  EXPECT_EQ(closest_match("nods", names), "nodes");
  EXPECT_EQ(closest_match("xxdes", names), "nodes");  // two edits
  EXPECT_EQ(closest_match("xxxes", names), "");       // three edits of a five-letter word
  EXPECT_EQ(closest_match("rank_per_nod", names), "ranks_per_node");
  EXPECT_EQ(closest_match("anything", {}), "");
}

TEST(DtrainVariables, AreTheOnesDtrainSetsForEveryRank) {
  for (const char* name :
       {"DTRAIN_JOB_ID", "DTRAIN_RUN_DIR", "DTRAIN_HOSTS", "DTRAIN_RANK", "DTRAIN_WORLD_SIZE",
        "DTRAIN_LOCAL_RANK", "DTRAIN_LOCAL_SIZE", "DTRAIN_CPUSET", "DTRAIN_GPUS", "DTRAIN_NICS"}) {
    EXPECT_TRUE(is_dtrain_variable(name)) << name;
  }
  EXPECT_FALSE(is_dtrain_variable("DTRAIN_TIMEOUT"));
  EXPECT_FALSE(is_dtrain_variable("dtrain_rank"));
  EXPECT_FALSE(is_dtrain_variable("NCCL_DEBUG"));
}

TEST(YamlFields, QuoteShortEscapesAndShortens) {
  EXPECT_EQ(detail::quote_short("abc"), "\"abc\"");
  EXPECT_EQ(detail::quote_short("a\"b\\c\td"), "\"a\\x22b\\x5cc\\x09d\"");
  EXPECT_EQ(detail::quote_short(std::string(41, 'x')), "\"" + std::string(37, 'x') + "...\"");
  EXPECT_EQ(detail::quote_short(std::string(40, 'x')), "\"" + std::string(40, 'x') + "\"");
}

TEST(YamlFields, DescribeNamesTheKindOfNode) {
  const YAML::Node doc = YAML::Load("{s: hi, n: ~, l: [1], m: {a: 1}}");
  EXPECT_EQ(detail::describe(doc["s"]), "\"hi\"");
  EXPECT_EQ(detail::describe(doc["n"]), "nothing");
  EXPECT_EQ(detail::describe(doc["l"]), "a list");
  EXPECT_EQ(detail::describe(doc["m"]), "a mapping");
  EXPECT_EQ(detail::one_of(std::vector<std::string>{"a", "b", "c"}), "one of: a, b, c");
}

TEST(YamlFields, ParseIntTakesAPlusButNothingElse) {
  long long v = 0;
  EXPECT_TRUE(detail::parse_int("+12", v));
  EXPECT_EQ(v, 12);
  EXPECT_TRUE(detail::parse_int("-3", v));
  EXPECT_EQ(v, -3);
  EXPECT_FALSE(detail::parse_int("", v));
  EXPECT_FALSE(detail::parse_int("+", v));
  EXPECT_FALSE(detail::parse_int("12x", v));
  EXPECT_FALSE(detail::parse_int(" 12", v));
  EXPECT_FALSE(detail::parse_int("99999999999999999999", v));
}

TEST(YamlFields, StringsAreOneLine) {
  std::string out;
  EXPECT_EQ(
      errors_of("x: hello", [&](Reader& r, const YAML::Node& d) { r.string(d["x"], "x", out); }),
      "(no error)");
  EXPECT_EQ(out, "hello");
  EXPECT_EQ(
      errors_of("x: [a]", [&](Reader& r, const YAML::Node& d) { r.string(d["x"], "x", out); }),
      "f.yaml:1: x: expected a string, got a list");
  EXPECT_EQ(errors_of("x: \"a\\nb\"",
                      [&](Reader& r, const YAML::Node& d) { r.string(d["x"], "x", out); }),
            "f.yaml:1: x: expected one line of text, got \"a\\x0ab\"");
}

TEST(YamlFields, TokensAndChoices) {
  std::string out;
  EXPECT_EQ(
      errors_of("x: a.b@c+1",
                [&](Reader& r, const YAML::Node& d) { r.token(d["x"], "name", "a name", out); }),
      "(no error)");
  EXPECT_EQ(out, "a.b@c+1");
  EXPECT_EQ(
      errors_of("x: -a",
                [&](Reader& r, const YAML::Node& d) { r.token(d["x"], "name", "a name", out); }),
      "f.yaml:1: name: expected a name (letters, digits, '.', '_', '@', '+' or '-'), got \"-a\"");
  const std::vector<std::string> sites = {"local", "slurm"};
  EXPECT_EQ(
      errors_of("x: slurm",
                [&](Reader& r, const YAML::Node& d) { r.choice(d["x"], "site", sites, out); }),
      "(no error)");
  EXPECT_EQ(out, "slurm");
  EXPECT_EQ(
      errors_of("\nx: slrum",
                [&](Reader& r, const YAML::Node& d) { r.choice(d["x"], "site", sites, out); }),
      "f.yaml:2: site: expected one of: local, slurm, got \"slrum\" (did you mean \"slurm\"?)");
  EXPECT_EQ(errors_of("x: pbs", [&](Reader& r,
                                    const YAML::Node& d) { r.choice(d["x"], "site", sites, out); }),
            "f.yaml:1: site: expected one of: local, slurm, got \"pbs\"");
}

TEST(YamlFields, IntegersAndBooleans) {
  long long n = 0;
  auto read_n = [&](Reader& r, const YAML::Node& d) { r.integer(d["x"], "nodes", 1, 64, n); };
  EXPECT_EQ(errors_of("x: 64", read_n), "(no error)");
  EXPECT_EQ(n, 64);
  EXPECT_EQ(errors_of("x: 65", read_n),
            "f.yaml:1: nodes: expected an integer from 1 to 64, got \"65\"");
  EXPECT_EQ(errors_of("x: 2.5", read_n),
            "f.yaml:1: nodes: expected an integer from 1 to 64, got \"2.5\"");
  int small = 7;
  EXPECT_EQ(errors_of("x: 0",
                      [&](Reader& r, const YAML::Node& d) { r.integer(d["x"], "n", 1, 8, small); }),
            "f.yaml:1: n: expected an integer from 1 to 8, got \"0\"");
  EXPECT_EQ(small, 7);  // untouched on error
  bool flag = false;
  EXPECT_EQ(
      errors_of("x: on", [&](Reader& r, const YAML::Node& d) { r.boolean(d["x"], "b", flag); }),
      "(no error)");
  EXPECT_TRUE(flag);
  EXPECT_EQ(
      errors_of("x: no", [&](Reader& r, const YAML::Node& d) { r.boolean(d["x"], "b", flag); }),
      "(no error)");
  EXPECT_FALSE(flag);
  EXPECT_EQ(
      errors_of("x: 1", [&](Reader& r, const YAML::Node& d) { r.boolean(d["x"], "b", flag); }),
      "f.yaml:1: b: expected true or false, got \"1\"");
}

TEST(YamlFields, StringListsCheckEachItem) {
  std::vector<std::string> out;
  auto no_dash = [](const std::string& s) {
    return s.rfind('-', 0) == 0 ? std::string("expected no leading '-'") : std::string();
  };
  EXPECT_EQ(errors_of("x: [a, -b, [c], d]",
                      [&](Reader& r, const YAML::Node& d) {
                        r.string_list(d["x"], "command", out, no_dash);
                      }),
            "f.yaml:1: command[1]: expected no leading '-', got \"-b\"\n"
            "f.yaml:1: command[2]: expected a string, got a list");
  EXPECT_EQ(out, (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(errors_of("x: a", [&](Reader& r,
                                  const YAML::Node& d) { r.string_list(d["x"], "command", out); }),
            "f.yaml:1: command: expected a list of strings, got \"a\"");
}

TEST(YamlFields, EnvTakesShellNamesThatAreNotDtrains) {
  std::vector<std::pair<std::string, std::string>> out;
  auto read_env = [&](Reader& r, const YAML::Node& d) { r.env(d["env"], "env", out); };
  EXPECT_EQ(errors_of("env: {A: 1, B_2: x y, C: true}", read_env), "(no error)");
  EXPECT_EQ(out, (std::vector<std::pair<std::string, std::string>>{
                     {"A", "1"}, {"B_2", "x y"}, {"C", "true"}}));
  out.clear();
  EXPECT_EQ(
      errors_of("env:\n  1A: x\n  DTRAIN_RANK: 3\n  L: [1]\n  OK: v", read_env),
      "f.yaml:2: env.1A: expected a variable name of letters, digits and '_' not starting "
      "with a digit, got \"1A\"\n"
      "f.yaml:3: env.DTRAIN_RANK: expected a variable of your own, got \"DTRAIN_RANK\", which "
      "dtrain sets for every rank (docs/spec.md, \"What each rank gets\")\n"
      "f.yaml:4: env.L: expected a string, number or boolean, got a list");
  EXPECT_EQ(out, (std::vector<std::pair<std::string, std::string>>{{"OK", "v"}}));
  EXPECT_EQ(errors_of("env: [A]", read_env),
            "f.yaml:1: env: expected a mapping of NAME: value, got a list");
}

TEST(YamlFields, MappingsRefuseUnknownAndRepeatedFields) {
  std::vector<std::string> seen;
  auto read = [&](Reader& r, const YAML::Node& d) {
    r.mapping(d["affinity"], "affinity", {"gpu", "cpu"},
              [&](const std::string& key, const YAML::Node& value, const std::string& path) {
                seen.push_back(path + "=" + key + ":" + value.Scalar());
              });
  };
  EXPECT_EQ(errors_of("affinity:\n  gpu: a\n  gpus: b\n  nic: c\n  gpu: d", read),
            "f.yaml:3: affinity.gpus: unknown field; did you mean \"gpu\"?\n"
            "f.yaml:4: affinity.nic: unknown field; expected one of: gpu, cpu\n"
            "f.yaml:5: affinity.gpu: expected each field once, got it twice");
  EXPECT_EQ(seen, std::vector<std::string>{"affinity.gpu=gpu:a"});
  EXPECT_EQ(errors_of("affinity:\n  zzzzzz: 1", read),
            "f.yaml:2: affinity.zzzzzz: unknown field; expected one of: gpu, cpu");
  EXPECT_EQ(errors_of("affinity: 3", read),
            "f.yaml:1: affinity: expected a mapping with one of: gpu, cpu, got \"3\"");
}

TEST(YamlFields, LoadYamlRefusesOversizedBinaryDeepAndInvalidText) {
  EXPECT_EQ(load_error("a: 1", 3), "f.yaml: expected a job spec of at most 3 bytes, got 4 bytes");
  EXPECT_EQ(load_error(std::string("a: 1\0", 5)),
            "f.yaml: expected YAML text, got binary data (a NUL byte at offset 4)");
  EXPECT_EQ(load_error("a: 1\nb: " + std::string(65, '[')),
            "f.yaml:2: expected at most 64 levels of nested [ ] or { }, got more");
  EXPECT_EQ(load_error("a: [1, 2"), "f.yaml:1: invalid YAML: end of sequence flow not found");
  Collector errors("f.yaml");
  const YAML::Node doc = detail::load_yaml("a: " + std::string(64, '[') + std::string(64, ']'),
                                           1000, "a job spec", errors);
  EXPECT_TRUE(doc["a"].IsSequence());
  EXPECT_TRUE(errors.empty());
}

}  // namespace
}  // namespace dtrain::plan
