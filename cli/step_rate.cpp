#include "step_rate.hpp"

#include <exception>
#include <fstream>

#include "records/metric_record.hpp"

namespace dtrain::cli {

std::optional<double> StepRate::update() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a partial last line: read it whole next time
    offset_ += line.size() + 1;
    records::MetricRecord record;
    try {
      record = records::parse_metric_record(line, path_);
    } catch (const std::exception&) {
      continue;
    }
    if (record.type == records::RecordType::kStep) {
      steps_ += 1;
    } else if (record.type == records::RecordType::kInterval) {
      steps_ += record.step_interval.count();
    } else {
      continue;
    }
    marks_.push_back({record.time, steps_});
    if (marks_.size() > 50) marks_.pop_front();
  }
  if (marks_.size() < 2 || marks_.back().time <= marks_.front().time) return std::nullopt;
  return static_cast<double>(marks_.back().steps - marks_.front().steps) /
         (marks_.back().time - marks_.front().time);
}

}  // namespace dtrain::cli
