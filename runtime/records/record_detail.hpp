// How much of each step a rank's metric file keeps (docs/metrics.md, "Detail"): one definition of
// the setting, DTRAIN_RECORDS (a job spec sets it under `env:`), for init() and any other reader of
// it. Pure.
#pragma once

#include <optional>
#include <string_view>

namespace dtrain::records {

enum class RecordDetail {
  kIntervals,  // "intervals", the default: a record per interval of steps (step_interval.hpp)
  kSteps,      // "steps": a record per step, and a heartbeat at every collective's enter and exit
};

inline constexpr std::string_view kRecordsVariable = "DTRAIN_RECORDS";
inline constexpr RecordDetail kDefaultRecordDetail = RecordDetail::kIntervals;

// "intervals" or "steps"; nothing for anything else.
std::optional<RecordDetail> parse_record_detail(std::string_view text);
std::string_view record_detail_name(RecordDetail detail);
// What a bad value is told it should be, after "expected ".
inline constexpr std::string_view kRecordDetailExpected =
    "\"intervals\" (a record per interval of steps, the default) or \"steps\" (a record per step)";

}  // namespace dtrain::records
