// What `dtrain stats` and `report` take from a run directory's plan.json and job.yaml: each field,
// what a missing file or field leaves empty, and the messages of a damaged file.
#include "run_summary.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "plan/errors.hpp"

namespace dtrain::cli {
namespace {

const std::string kPlan = "runs/fm-42/plan.json";
const std::string kSpec = "runs/fm-42/job.yaml";

RunSummary summary_of(const std::optional<std::string>& plan_json,
                      const std::optional<std::string>& spec_yaml = std::nullopt) {
  return parse_run_summary("runs/fm-42", plan_json, kPlan, spec_yaml, kSpec);
}

// The message of what parse_run_summary throws; "" when it does not.
template <typename Error>
std::string refusal(const std::optional<std::string>& plan_json,
                    const std::optional<std::string>& spec_yaml = std::nullopt) {
  try {
    summary_of(plan_json, spec_yaml);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RunSummary, EveryFieldComesFromPlanAndSpec) {
  const RunSummary s =
      summary_of(R"({"version":1,"job":{"name":"fm","id":"42","site":"polaris"},"nodes":2,)"
                 R"("ranks_per_node":4,"world_size":8,"ranks":[]})",
                 "name: fm\ngpus_per_rank: 2\ncommand: [train]\n");
  EXPECT_EQ(s, (RunSummary{"fm-42", "fm", "42", "polaris", 2, 4, 8, 2}));
}

// A run directory made by hand: no files, or files with a few fields.
TEST(RunSummary, MissingFilesAndFieldsSayNothing) {
  const RunSummary nothing{"fm-42", "", "", "", 0, 0, 0, std::nullopt};
  EXPECT_EQ(summary_of(std::nullopt, std::nullopt), nothing);
  EXPECT_EQ(summary_of(std::nullopt, ""), nothing);  // an empty job.yaml
  EXPECT_EQ(summary_of(R"({"version":1,"job":{"name":"scale","id":"1"}})", "name: scale\n"),
            (RunSummary{"fm-42", "scale", "1", "", 0, 0, 0, std::nullopt}));
}

TEST(RunSummary, LabelIsTheDirectorysName) {
  EXPECT_EQ(run_label("runs/fm-42"), "fm-42");
  EXPECT_EQ(run_label("runs/fm-42/"), "fm-42");
  EXPECT_EQ(run_label("/abs/runs/fm-42/."), "fm-42");
  EXPECT_EQ(parse_run_summary("runs/fm-42/", std::nullopt, kPlan, std::nullopt, kSpec).label,
            "fm-42");
}

TEST(RunSummary, DamagedPlanIsNamedWithItsField) {
  EXPECT_EQ(refusal<RunSummaryError>("{\"job\": not json"),
            "dtrain: runs/fm-42/plan.json: expected a launch plan (JSON), got text that is not "
            "JSON");
  EXPECT_EQ(refusal<RunSummaryError>("[1, 2]"),
            "dtrain: runs/fm-42/plan.json: expected a JSON object, got [1,2]");
  EXPECT_EQ(refusal<RunSummaryError>(R"({"job": "fm"})"),
            "dtrain: runs/fm-42/plan.json: field \"job\": expected an object, got \"fm\"");
  EXPECT_EQ(refusal<RunSummaryError>(R"({"job": {"name": 3}})"),
            "dtrain: runs/fm-42/plan.json: \"job\": field \"name\": expected a string, got 3");
  EXPECT_EQ(refusal<RunSummaryError>(R"({"job": {"id": 42}})"),
            "dtrain: runs/fm-42/plan.json: \"job\": field \"id\": expected a string, got 42");
  EXPECT_EQ(refusal<RunSummaryError>(R"({"job": {"site": null}})"),
            "dtrain: runs/fm-42/plan.json: \"job\": field \"site\": expected a string, got null");
  EXPECT_EQ(refusal<RunSummaryError>(R"({"nodes": "2"})"),
            "dtrain: runs/fm-42/plan.json: field \"nodes\": expected an integer from 1 to "
            "2147483647, got \"2\"");
  EXPECT_EQ(refusal<RunSummaryError>(R"({"ranks_per_node": 0})"),
            "dtrain: runs/fm-42/plan.json: field \"ranks_per_node\": expected an integer from 1 "
            "to 2147483647, got 0");
  EXPECT_EQ(refusal<RunSummaryError>(R"({"world_size": 4294967297})"),
            "dtrain: runs/fm-42/plan.json: field \"world_size\": expected an integer from 0 to "
            "2147483647, got 4294967297");
}

// Issue 45 item 8: a byte that begins no UTF-8 character was "not JSON" here where the spec
// readers say "expected UTF-8 text"; the same check in the same words.
TEST(RunSummary, APlanThatIsNotUtf8IsNamedAsTheSpecReadersNameIt) {
  EXPECT_EQ(refusal<RunSummaryError>("{\"job\": {\"name\": \"caf\xe9\"}}"),
            "dtrain: runs/fm-42/plan.json: expected UTF-8 text, got byte \\xe9 at offset 21, "
            "which begins no UTF-8 character");
}

TEST(RunSummary, DamagedSpecIsNamedWithItsLineAndField) {
  EXPECT_EQ(refusal<plan::SpecError>(std::nullopt, "name: fm\ngpus_per_rank: lots\n"),
            "runs/fm-42/job.yaml:2: gpus_per_rank: expected an integer from 0 to 64, got "
            "\"lots\"");
  EXPECT_NE(refusal<plan::SpecError>(std::nullopt, "name: [fm\n").find("runs/fm-42/job.yaml"),
            std::string::npos);
  EXPECT_NE(refusal<plan::SpecError>(std::nullopt, "- a list\n")
                .find("runs/fm-42/job.yaml:1: expected a mapping of job fields"),
            std::string::npos);
  // Fields it does not read are not checked: a hand-made job.yaml may hold anything else.
  EXPECT_EQ(summary_of(std::nullopt, "name: [not, a, name]\ngpus_per_rank: 1\n").gpus_per_rank, 1);
}

TEST(RunSummary, ScalingRunCountsGpusWhenTheSpecSays) {
  RunSummary s;
  s.label = "fm-42";
  s.job = "fm";
  report::RunStats stats;
  stats.ranks.resize(8);
  stats.total_samples_per_second = 800;
  report::ScalingRun run = scaling_run(s, stats);
  EXPECT_EQ(run.label, "fm-42");
  EXPECT_EQ(run.job, "fm");
  EXPECT_EQ(run.ranks, 8);
  EXPECT_EQ(run.samples_per_second, 800);
  EXPECT_EQ(run.gpus, std::nullopt);
  s.gpus_per_rank = 2;
  EXPECT_EQ(scaling_run(s, stats).gpus, 16);
}

}  // namespace
}  // namespace dtrain::cli
