// The run settings' one definition (common/run_settings.hpp): what the spec's records:, hang_after:
// and on_hang: and the DTRAIN_RECORDS, DTRAIN_HANG_AFTER and DTRAIN_ON_HANG variables accept.
#include "common/run_settings.hpp"

#include <gtest/gtest.h>

namespace dtrain {
namespace {

using std::chrono::seconds;

TEST(RunSettings, RecordDetailWords) {
  EXPECT_EQ(parse_record_detail("intervals"), RecordDetail::kIntervals);
  EXPECT_EQ(parse_record_detail("steps"), RecordDetail::kSteps);
  for (const char* bad : {"", "step", "Steps", "all", " steps"}) {
    EXPECT_EQ(parse_record_detail(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(record_detail_name(RecordDetail::kSteps), "steps");
  EXPECT_EQ(record_detail_name(kDefaultRecordDetail), "intervals");
}

TEST(RunSettings, HangAfterTakesSecondsMinutesHoursOrOff) {
  EXPECT_EQ(parse_hang_after("45"), (HangAfter{false, seconds(45)}));
  EXPECT_EQ(parse_hang_after("45s"), (HangAfter{false, seconds(45)}));
  EXPECT_EQ(parse_hang_after("2m"), (HangAfter{false, seconds(120)}));
  EXPECT_EQ(parse_hang_after("1h"), (HangAfter{false, seconds(3600)}));
  EXPECT_EQ(parse_hang_after("24h"), (HangAfter{false, seconds(86400)}));
  EXPECT_EQ(parse_hang_after("1440m"), (HangAfter{false, seconds(86400)}));
  EXPECT_EQ(parse_hang_after("86400"), (HangAfter{false, seconds(86400)}));
  EXPECT_TRUE(parse_hang_after("off")->off);
  EXPECT_EQ(kDefaultHangAfter, (HangAfter{false, seconds(30)}));
  for (const char* bad : {"", "soon", "0", "0s", "s", "m", "-5", "1.5m", "30 s", " 30", "25h",
                          "86401", "1441m", "2M", "5d", "0x10", "99999999999999999999h", "Off"}) {
    EXPECT_EQ(parse_hang_after(bad), std::nullopt) << '"' << bad << '"';
  }
}

// What the planner exports reads back as the same setting.
TEST(RunSettings, HangAfterTextReadsBack) {
  for (const char* text : {"1", "30s", "2m", "1h", "24h", "off"}) {
    const HangAfter value = *parse_hang_after(text);
    EXPECT_EQ(parse_hang_after(hang_after_text(value)), value) << text;
  }
  EXPECT_EQ(hang_after_text(*parse_hang_after("2m")), "120");
  EXPECT_EQ(hang_after_text(*parse_hang_after("off")), "off");
}

TEST(RunSettings, OnHangWords) {
  EXPECT_EQ(parse_on_hang("abort"), OnHang::kAbort);
  EXPECT_EQ(parse_on_hang("wait"), OnHang::kWait);
  EXPECT_EQ(parse_on_hang("kill"), std::nullopt);
  EXPECT_EQ(on_hang_name(OnHang::kWait), "wait");
  EXPECT_EQ(on_hang_name(kDefaultOnHang), "abort");
}

TEST(RunSettings, AProblemIsNamedForTheSettingsVariablesOnly) {
  EXPECT_EQ(run_setting_problem("DTRAIN_RECORDS", "all"), kRecordDetailExpected);
  EXPECT_EQ(run_setting_problem("DTRAIN_HANG_AFTER", "soon"), kHangAfterExpected);
  EXPECT_EQ(run_setting_problem("DTRAIN_ON_HANG", "kill"), kOnHangExpected);
  EXPECT_EQ(run_setting_problem("DTRAIN_RECORDS", "steps"), "");
  EXPECT_EQ(run_setting_problem("DTRAIN_HANG_AFTER", "2m"), "");
  EXPECT_EQ(run_setting_problem("NCCL_DEBUG", "anything"), "");
}

}  // namespace
}  // namespace dtrain
