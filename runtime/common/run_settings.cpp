#include "common/run_settings.hpp"

#include "common/number_text.hpp"

namespace dtrain {

std::optional<RecordDetail> parse_record_detail(std::string_view text) {
  if (text == "intervals") return RecordDetail::kIntervals;
  if (text == "steps") return RecordDetail::kSteps;
  return std::nullopt;
}

std::string_view record_detail_name(RecordDetail detail) {
  return detail == RecordDetail::kSteps ? "steps" : "intervals";
}

std::optional<HangAfter> parse_hang_after(std::string_view text) {
  if (text == "off") return HangAfter{true, kDefaultHangAfter.after};
  // A bare number is seconds.
  long long unit = 1;
  if (!text.empty() && (text.back() == 's' || text.back() == 'm' || text.back() == 'h')) {
    unit = text.back() == 'h' ? 3600 : text.back() == 'm' ? 60 : 1;
    text.remove_suffix(1);
  }
  const long long max = kMaxHangAfter.count();
  const auto n = parse_whole_number(text, 1, max / unit);
  if (!n) return std::nullopt;
  return HangAfter{false, std::chrono::seconds(*n * unit)};
}

std::string hang_after_text(HangAfter value) {
  return value.off ? std::string("off") : std::to_string(value.after.count());
}

std::optional<OnHang> parse_on_hang(std::string_view text) {
  if (text == "abort") return OnHang::kAbort;
  if (text == "wait") return OnHang::kWait;
  return std::nullopt;
}

std::string_view on_hang_name(OnHang value) { return value == OnHang::kWait ? "wait" : "abort"; }

std::string_view run_setting_problem(std::string_view variable, std::string_view value) {
  if (variable == kRecordsVariable && !parse_record_detail(value)) return kRecordDetailExpected;
  if (variable == kHangAfterVariable && !parse_hang_after(value)) return kHangAfterExpected;
  if (variable == kOnHangVariable && !parse_on_hang(value)) return kOnHangExpected;
  return "";
}

}  // namespace dtrain
