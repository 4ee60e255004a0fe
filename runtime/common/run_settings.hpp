// The run settings that both a job spec's field and a DTRAIN_* variable give (docs/spec.md,
// docs/metrics.md "Detail", docs/fault-tolerance.md): how much a rank's metric file keeps
// (`records:`, DTRAIN_RECORDS) and the live hang watch's threshold and policy (`hang_after:`,
// DTRAIN_HANG_AFTER; `on_hang:`, DTRAIN_ON_HANG). One definition of their words, parsers and what a
// bad value is told it should be, for the planner (which exports the spec's fields as the
// variables), libdtrain's init() and each rank's logger. Here, in the library every part links,
// because the planner may link no other part of the runtime. Pure.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace dtrain {

// records: / DTRAIN_RECORDS.
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

// hang_after: / DTRAIN_HANG_AFTER: how long ranks wait inside one collective before the watch
// names who holds them, or off.
struct HangAfter {
  bool off = false;
  std::chrono::seconds after{30};
  bool operator==(const HangAfter&) const = default;
};
inline constexpr std::string_view kHangAfterVariable = "DTRAIN_HANG_AFTER";
inline constexpr HangAfter kDefaultHangAfter{};
inline constexpr std::chrono::seconds kMaxHangAfter{86400};
// A whole number of seconds ("45", "45s"), minutes ("2m") or hours ("1h"), from 1 s to 24 h, or
// "off"; nothing for anything else ("soon", "0", "1.5m", "30 s", "25h").
std::optional<HangAfter> parse_hang_after(std::string_view text);
// What the planner exports: whole seconds ("120") or "off", which every parse_hang_after reads.
std::string hang_after_text(HangAfter value);
inline constexpr std::string_view kHangAfterExpected =
    "a duration like 30s or 2m (whole seconds, minutes or hours from 1 s to 24 h; a bare number "
    "is seconds) or off";

// on_hang: / DTRAIN_ON_HANG: what the watch does to the rank it names.
enum class OnHang {
  kAbort,  // "abort", the default: end the rank, so that the job ends (and `restarts` begin)
  kWait,   // "wait": only name it
};
inline constexpr std::string_view kOnHangVariable = "DTRAIN_ON_HANG";
inline constexpr OnHang kDefaultOnHang = OnHang::kAbort;
std::optional<OnHang> parse_on_hang(std::string_view text);
std::string_view on_hang_name(OnHang value);
inline constexpr std::string_view kOnHangExpected =
    "abort (end the rank the hang watch names, so the job ends) or wait (only name it)";

// What is wrong with `value` of one of the variables above, after "expected " ("" when it is
// right or `variable` is none of them): what a spec's `env:` that sets one of them directly is
// told at plan time, rather than by every rank at its start.
std::string_view run_setting_problem(std::string_view variable, std::string_view value);

}  // namespace dtrain
