// The fields of one run-directory record line (a metric record, an attempt, a checkpoint, a job's
// end), each read with the range it is accepted in. Every record type reads through here, so a
// field out of range reads alike in any file, naming the file, line, field, range and the value
// as written: `dtrain: runs/a/attempts.jsonl:3: field "attempt": expected an integer from 0 to
// 999999, got 4294967297`. Nothing is narrowed unchecked: 4294967297 is not attempt 1, and
// 2^64-1 is not -1. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace dtrain::records {

// The times a record may carry (a metric record's "time", an attempt's "start" and "end", a
// checkpoint's "time"), and the longest duration ("seconds"): from the epoch to
// 2100-01-01T00:00:00Z. A clock that wrote a record never reads past that; a year such as 9999
// is a damaged record, which would otherwise count as millennia of lost time, and any two times
// in the range differ by what 64-bit microseconds hold.
inline constexpr std::int64_t kLatestRecordSeconds = 4102444800;  // 2100-01-01T00:00:00Z
// The same bound for the durations and times a record holds as numbers of seconds.
inline constexpr double kMaxRecordSeconds = static_cast<double>(kLatestRecordSeconds);

// The largest value of a field its reader keeps in an int (a rank, a GPU index, a count of ranks).
inline constexpr long long kMaxIntField = std::numeric_limits<int>::max();

// `value` as an integer from `min` to `max`; nothing for a non-integer or one outside the range
// (also past what long long holds).
std::optional<long long> integer_within(const nlohmann::json& value, long long min, long long max);

// `value` as the record wrote it, for a message: cut after 100 bytes (at a character's start),
// since a damaged line may hold megabytes in one field.
std::string shown_value(const nlohmann::json& value);

class RecordFields {
 public:
  // Throws the record type's error with a message; must not return.
  using Fail = std::function<void(const std::string& message)>;

  // `where` ("runs/a/rank-00001.jsonl:12") starts every message, after "dtrain: ".
  RecordFields(const nlohmann::json& object, std::string where, Fail fail);

  bool has(const char* name) const;
  // The field, or the error `missing field "NAME"`.
  const nlohmann::json& field(const char* name) const;

  long long integer(const char* name, long long min, long long max) const;
  // A number from `min` to `max` (finite: JSON has no infinity, and 1e999 reads as one).
  double number(const char* name, double min, double max) const;
  // Unix seconds of a time (kLatestRecordSeconds).
  double unix_time(const char* name) const;
  // A time as the logs write it (records/log_line.hpp, RFC 3339), within the same range.
  std::string time_text(const char* name) const;
  std::string text(const char* name) const;
  bool boolean(const char* name) const;

  // Throws `dtrain: WHERE: WHAT` through the record type's error.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  const nlohmann::json& object_;
  std::string where_;
  Fail fail_;
};

}  // namespace dtrain::records
