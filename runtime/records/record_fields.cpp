#include "records/record_fields.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "records/log_line.hpp"

namespace dtrain::records {
namespace {

// A bound as a person reads it: 4102444800, not 4.10244e+09 or 4102444800.0.
std::string bound_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<long long>(v));
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string quoted_name(const char* name) { return std::string("field \"") + name + "\""; }

}  // namespace

std::optional<long long> integer_within(const nlohmann::json& value, long long min, long long max) {
  if (value.is_number_unsigned()) {
    // Read as unsigned: 2^64-1 as long long would be -1, inside many a range.
    const auto v = value.get<std::uint64_t>();
    if (max < 0 || v > static_cast<std::uint64_t>(max)) return std::nullopt;
    const auto n = static_cast<long long>(v);
    return n < min ? std::nullopt : std::optional<long long>(n);
  }
  if (!value.is_number_integer()) return std::nullopt;
  const auto n = value.get<long long>();
  return n < min || n > max ? std::nullopt : std::optional<long long>(n);
}

std::string shown_value(const nlohmann::json& value) {
  constexpr std::size_t kMax = 100;
  std::string text = value.dump();
  if (text.size() <= kMax) return text;
  std::size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

RecordFields::RecordFields(const nlohmann::json& object, std::string where, Fail fail)
    : object_(object), where_(std::move(where)), fail_(std::move(fail)) {}

void RecordFields::fail(const std::string& what) const {
  fail_("dtrain: " + where_ + ": " + what);
  // Fail must throw; a caller's mistake must not let a bad record through.
  throw std::logic_error("dtrain: records: RecordFields::Fail returned");
}

bool RecordFields::has(const char* name) const { return object_.contains(name); }

const nlohmann::json& RecordFields::field(const char* name) const {
  const auto it = object_.find(name);
  if (it == object_.end()) fail(std::string("missing field \"") + name + "\"");
  return *it;
}

long long RecordFields::integer(const char* name, long long min, long long max) const {
  const nlohmann::json& v = field(name);
  const auto n = integer_within(v, min, max);
  if (!n) {
    fail(quoted_name(name) + ": expected an integer from " + std::to_string(min) + " to " +
         std::to_string(max) + ", got " + shown_value(v));
  }
  return *n;
}

double RecordFields::number(const char* name, double min, double max) const {
  const nlohmann::json& v = field(name);
  const double d = v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
  if (!(d >= min && d <= max)) {
    fail(quoted_name(name) + ": expected a number from " + bound_text(min) + " to " +
         bound_text(max) + ", got " + shown_value(v));
  }
  return d;
}

double RecordFields::unix_time(const char* name) const {
  const nlohmann::json& v = field(name);
  const double d = v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
  if (!(d >= 0 && d <= static_cast<double>(kLatestRecordSeconds))) {
    fail(quoted_name(name) + ": expected Unix seconds from 0 to " +
         std::to_string(kLatestRecordSeconds) + ", got " + shown_value(v));
  }
  return d;
}

std::string RecordFields::time_text(const char* name) const {
  const nlohmann::json& v = field(name);
  const auto micros = v.is_string() ? parse_rfc3339(v.get<std::string>()) : std::nullopt;
  if (!micros || *micros < 0 || *micros > kLatestRecordSeconds * 1000000) {
    fail(quoted_name(name) + ": expected a time from " + format_log_time(0).substr(0, 19) +
         "Z to " + format_log_time(kLatestRecordSeconds * 1000000).substr(0, 19) + "Z, got " +
         shown_value(v));
  }
  return v.get<std::string>();
}

std::string RecordFields::text(const char* name) const {
  const nlohmann::json& v = field(name);
  if (!v.is_string()) fail(quoted_name(name) + ": expected a string, got " + shown_value(v));
  return v.get<std::string>();
}

bool RecordFields::boolean(const char* name) const {
  const nlohmann::json& v = field(name);
  if (!v.is_boolean()) fail(quoted_name(name) + ": expected true or false, got " + shown_value(v));
  return v.get<bool>();
}

}  // namespace dtrain::records
