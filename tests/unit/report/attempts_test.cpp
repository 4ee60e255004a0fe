// The attempts header of `dtrain logs --first-error` and `--hang` for a restarted job.
#include "report/attempts.hpp"

#include <gtest/gtest.h>

namespace dtrain::report {
namespace {

records::AttemptRecord attempt(int k, const char* outcome, const char* cause) {
  records::AttemptRecord a;
  a.attempt = k;
  a.end = "2026-11-26T02:00:0" + std::to_string(k) + ".000000Z";
  a.outcome = outcome;
  a.cause = cause;
  return a;
}

// A restarted job's report says which attempt it covers and how the earlier ones ended.
TEST(Attempts, ARestartedJobsReportSaysWhichAttemptItCovers) {
  EXPECT_EQ(last_attempt({}), 0);
  EXPECT_EQ(last_attempt({attempt(0, "restarted", "boom")}), 1);
  EXPECT_EQ(last_attempt({attempt(0, "restarted", "boom"), attempt(1, "ended", "oops")}), 1);
  EXPECT_EQ(format_attempts({}), "");
  EXPECT_EQ(format_attempts({attempt(0, "restarted", "rank 1 on n exited with status 3: boom"),
                             attempt(1, "ended", "rank 0 on n exited with status 1: oops")}),
            "attempt 2 of the job (ended): the report below covers its lines only\n"
            "  attempt 1 restarted at 2026-11-26T02:00:00.000000Z: rank 1 on n exited with "
            "status 3: boom\n");
  EXPECT_EQ(format_attempts({attempt(0, "restarted", "rank 1 on n exited with status 3: boom")}),
            "attempt 2 of the job (no record yet: running, or its supervisor was stopped with "
            "it): the report below covers its lines only\n"
            "  attempt 1 restarted at 2026-11-26T02:00:00.000000Z: rank 1 on n exited with "
            "status 3: boom\n");
}

// `--first-error --attempt N`: the header names the attempt covered, the earlier ones and the
// later ones, so a reader knows the job went on.
TEST(Attempts, AnEarlierAttemptsReportSaysLaterOnesExist) {
  const std::vector<records::AttemptRecord> recovered = {
      attempt(0, "restarted", "rank 1 on n exited with status 3: boom"),
      attempt(1, "completed", "")};
  EXPECT_EQ(format_attempts(recovered, 0),
            "attempt 1 of the job (restarted): the report below covers its lines only\n"
            "  later: attempt 2 completed at 2026-11-26T02:00:01.000000Z\n");
  EXPECT_EQ(format_attempts(recovered, 1), format_attempts(recovered));
  EXPECT_EQ(first_failed_attempt(recovered), 0);
  EXPECT_EQ(first_failed_attempt({attempt(0, "completed", "")}), std::nullopt);
  // The attempt after a "restarted" record has none yet.
  EXPECT_EQ(format_attempts({attempt(0, "restarted", "boom"), attempt(1, "restarted", "oops")}, 0),
            "attempt 1 of the job (restarted): the report below covers its lines only\n"
            "  later: attempt 2 restarted at 2026-11-26T02:00:01.000000Z: oops\n"
            "  later: attempt 3 (no record yet: running, or its supervisor was stopped with it)\n");
}

}  // namespace
}  // namespace dtrain::report
