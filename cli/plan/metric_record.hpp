// One line of a rank's metric records (rank-NNNNN.jsonl, written by libdtrain's Meter; schema in
// docs/metrics.md). Version 1 has step records only; version 2 adds "type" and collective
// heartbeats. Readers ignore fields they do not know and reject versions they do not.
// Pure: the CLI reads the files and hands the lines here.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dtrain::plan {

enum class RecordType { kStep, kCollective };

struct MetricRecord {
  int version = 1;
  RecordType type = RecordType::kStep;
  double time = 0;  // Unix seconds when the record was made
  int rank = 0;
  // Step records.
  long long step = 0;
  long long samples = 0;
  double seconds = 0;
  std::optional<double> comm_seconds;  // v2: time in collectives since the previous step record
  std::optional<double> data_seconds;  // v2, when the training code reports it
  // Collective heartbeats (v2).
  long long seq = 0;  // collectives of this rank counted from 0
  std::string op;     // "allreduce", ...
  long long bytes = 0;
  bool enter = false;  // "phase": "enter" (true) or "exit"
};

class MetricFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The newest schema version this reader knows.
inline constexpr int kMetricSchemaVersion = 2;

// Parses one JSON Lines record; `where` ("rank-00001.jsonl:12") prefixes any error.
MetricRecord parse_metric_record(std::string_view line, const std::string& where);

}  // namespace dtrain::plan
