#include "records/record_detail.hpp"

namespace dtrain::records {

std::optional<RecordDetail> parse_record_detail(std::string_view text) {
  if (text == "intervals") return RecordDetail::kIntervals;
  if (text == "steps") return RecordDetail::kSteps;
  return std::nullopt;
}

std::string_view record_detail_name(RecordDetail detail) {
  return detail == RecordDetail::kSteps ? "steps" : "intervals";
}

}  // namespace dtrain::records
