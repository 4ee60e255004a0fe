// --first-error of a job the launcher or scheduler stopped (its walltime, a cancel): no rank is
// blamed, whatever the logs lost.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rank_logs.hpp"
#include "report/first_error.hpp"

namespace dtrain::report {
namespace {

using testing::at;
using testing::exit_line;
using testing::kT0;
using testing::scan;
using testing::start;

// Issue 22, item 20: at the walltime the scheduler (or local's `timeout`) sends SIGTERM to every
// rank, and run-rank writes "was killed by signal 15 (SIGTERM)" for each: no rank is to blame.
TEST(FirstError, AJobStoppedAtItsWalltimeBlamesNoRank) {
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 3)), at(59, "step 90"), at(60.0, exit_line(0, 0, 15))}),
      scan(1, {at(0, start(1, 3)), at(59, "step 90"), at(60.2, exit_line(1, 0, 15))}),
      scan(2, {at(0, start(2, 3)), at(59, "step 90"), at(60.1, exit_line(2, 0, 15))}),
  };
  const auto r = find_first_error(scans, {}, std::nullopt);
  EXPECT_FALSE(r.culprit);
  EXPECT_TRUE(r.victims.empty());
  ASSERT_EQ(r.stopped.size(), 3u);
  EXPECT_EQ(r.stopped[1].rank, 2);
  const std::string text = format_first_error(r);
  EXPECT_EQ(text.find("culprit"), std::string::npos) << text;
  EXPECT_NE(text.find("no rank failed on its own: 3 of 3 ranks were stopped by the launcher or "
                      "scheduler (SIGTERM, SIGINT or SIGHUP), as when the job reaches its walltime "
                      "or is cancelled; no rank is blamed\n  rank 0 on node0 was killed by signal "
                      "15 (SIGTERM) at 2026-11-22T10:01:00.000000Z; its last line: "),
            std::string::npos)
      << text;
  EXPECT_TRUE(first_error_to_json(r)["culprit"].is_null());
  EXPECT_EQ(first_error_to_json(r)["stopped"].size(), 3u);
}

// Issue 22, item 20, after the fact: the launcher's SIGKILL took rank 1's logger before its exit
// line, so from the logs alone rank 1 went silent first and would be the culprit. `dtrain submit`
// recorded that the walltime ended the job (job-end.jsonl): every failing rank was stopped.
TEST(FirstError, AJobKnownToHaveReachedItsWalltimeBlamesNoRankThoughOneLostItsExitLine) {
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 3)), at(59, "step 90"), at(60.2, exit_line(0, 0, 15))}),
      scan(1, {at(0, start(1, 3)), at(58, "step 89")}),
      scan(2, {at(0, start(2, 3)), at(59, "step 90"), at(60.1, exit_line(2, 0, 15))}),
  };
  const auto from_logs = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(from_logs.culprit);
  EXPECT_EQ(from_logs.culprit->rank, 1);

  const auto r = find_first_error(scans, {}, std::nullopt, /*walltime_reached=*/true);
  EXPECT_FALSE(r.culprit);
  EXPECT_TRUE(r.victims.empty());
  ASSERT_EQ(r.stopped.size(), 3u);
  EXPECT_EQ(r.stopped[0].rank, 1);
  const std::string text = format_first_error(r);
  EXPECT_NE(text.find("no rank failed on its own: 3 of 3 ranks were stopped by the launcher when "
                      "the job reached its walltime (as `dtrain submit` recorded); no rank is "
                      "blamed\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(summarize_first_error(r),
            "no rank failed on its own; 3 ranks were stopped at the job's walltime");
  EXPECT_EQ(first_error_to_json(r)["walltime_reached"], true);
  EXPECT_EQ(first_error_to_json(from_logs)["walltime_reached"], false);
}

// The same when the SIGKILL took every rank's logger before its exit line (seen in CI): with no
// exit line anywhere the logs alone say "still running", but the job is known to have ended.
TEST(FirstError, AJobKnownToHaveReachedItsWalltimeBlamesNoRankThoughNoRankHasAnExitLine) {
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 2)), at(1, "started")}),
      scan(1, {at(0, start(1, 2)), at(1.5, "started")}),
  };
  const auto from_logs = find_first_error(scans, {}, std::nullopt);
  EXPECT_FALSE(from_logs.culprit);
  EXPECT_EQ(from_logs.running.size(), 2u);

  const auto r = find_first_error(scans, {}, std::nullopt, /*walltime_reached=*/true);
  EXPECT_FALSE(r.culprit);
  EXPECT_TRUE(r.running.empty());
  ASSERT_EQ(r.stopped.size(), 2u);
  EXPECT_EQ(r.stopped[0].rank, 0);
  const std::string text = format_first_error(r);
  EXPECT_NE(text.find("no rank failed on its own: 2 of 2 ranks were stopped by the launcher when "
                      "the job reached its walltime (as `dtrain submit` recorded); no rank is "
                      "blamed\n  rank 0 on node0 went silent (its log has no exit line from dtrain "
                      "run-rank) at "),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace dtrain::report
