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

}  // namespace
}  // namespace dtrain::report
