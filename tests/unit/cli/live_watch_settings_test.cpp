// What each rank's logger reads of DTRAIN_HANG_AFTER and DTRAIN_ON_HANG (a user's shell, a site's
// env, or the spec's hang_after: and on_hang:, which the planner exports): the parsers of
// common/run_settings.hpp, a bad value named with the variable.
#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "live_watch.hpp"

namespace dtrain::cli {
namespace {

std::string refusal(const launch::Environment& env) {
  try {
    live_watch_settings(env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(LiveWatchSettings, DefaultsAreThirtySecondsAndAbort) {
  const LiveWatchSettings s = live_watch_settings({});
  EXPECT_EQ(s.hang_after, std::chrono::seconds(30));
  EXPECT_TRUE(s.abort);
  EXPECT_EQ(live_watch_settings({{"DTRAIN_HANG_AFTER", ""}}).hang_after, std::chrono::seconds(30));
}

TEST(LiveWatchSettings, TakesTheSpecsDurationsAndPolicy) {
  EXPECT_EQ(live_watch_settings({{"DTRAIN_HANG_AFTER", "120"}}).hang_after,
            std::chrono::seconds(120));
  EXPECT_EQ(live_watch_settings({{"DTRAIN_HANG_AFTER", "2m"}}).hang_after,
            std::chrono::seconds(120));
  EXPECT_EQ(live_watch_settings({{"DTRAIN_HANG_AFTER", "off"}}).hang_after, std::nullopt);
  EXPECT_FALSE(live_watch_settings({{"DTRAIN_ON_HANG", "wait"}}).abort);
}

TEST(LiveWatchSettings, ABadValueIsNamed) {
  EXPECT_EQ(refusal({{"DTRAIN_HANG_AFTER", "soon"}}),
            "dtrain: DTRAIN_HANG_AFTER: expected a duration like 30s or 2m (whole seconds, "
            "minutes or hours from 1 s to 24 h; a bare number is seconds) or off, got \"soon\"");
  EXPECT_EQ(refusal({{"DTRAIN_ON_HANG", "kill"}}),
            "dtrain: DTRAIN_ON_HANG: expected abort (end the rank the hang watch names, so the "
            "job ends) or wait (only name it), got \"kill\"");
}

}  // namespace
}  // namespace dtrain::cli
