// scan_metric_record (metric_record.hpp): the step and collective records of a full-detail run
// read without a JSON document. A 1,024-rank x 50,000-step run at full detail holds some 150
// million such lines (19 GB); through nlohmann's DOM (a map node and a string per field, strtod)
// reading them took about 10 minutes on 2 cores, most of it in the lexer, the allocator and the
// map (perf, docs/benchmarks.md "Records at scale"). This scanner takes only the exact text the
// writer writes (format_step_record, format_collective_record: fields in that order, no blanks,
// no escapes) and declines anything else, which parse_metric_record then reads in full: so it
// never errs, and what it accepts reads as the general path reads it (the same ranges; numbers by
// std::from_chars, correctly rounded as strtod is).
#include <charconv>
#include <cstring>
#include <limits>

#include "records/attempt_record.hpp"
#include "records/metric_record.hpp"
#include "records/record_fields.hpp"

namespace dtrain::records {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Scanner {
 public:
  explicit Scanner(std::string_view line) : p_(line.data()), end_(line.data() + line.size()) {}

  // The exact bytes `text` next.
  bool literal(std::string_view text) {
    if (static_cast<std::size_t>(end_ - p_) < text.size() ||
        std::memcmp(p_, text.data(), text.size()) != 0) {
      return false;
    }
    p_ += text.size();
    return true;
  }

  // A JSON integer (-?(0|[1-9][0-9]*), not followed by a fraction or an exponent, which would
  // make it a JSON float) within [min, max].
  bool integer(long long& out, long long min, long long max) {
    const char* start = p_;
    if (!integer_digits()) return false;
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    const auto [end, error] = std::from_chars(start, p_, out);
    return error == std::errc() && end == p_ && out >= min && out <= max;
  }

  // A JSON number (integer, fraction, exponent) within [min, max].
  bool number(double& out, double min, double max) {
    const char* start = p_;
    if (!integer_digits()) return false;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    const auto [end, error] = std::from_chars(start, p_, out);
    return error == std::errc() && end == p_ && out >= min && out <= max;
  }

  // A string of printable ASCII without escapes (an operation's name).
  bool text(std::string& out) {
    if (!literal("\"")) return false;
    const char* start = p_;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ < 0x20 || *p_ > 0x7e || *p_ == '\\') return false;
      ++p_;
    }
    if (p_ == end_) return false;
    out.assign(start, p_);
    ++p_;
    return true;
  }

  // The record's end: the writer's optional "attempt", then the closing brace, then nothing.
  bool end(int& attempt) {
    if (literal(",\"attempt\":")) {
      long long n = 0;
      if (!integer(n, 0, kMaxAttempt)) return false;
      attempt = static_cast<int>(n);
    }
    return literal("}") && p_ == end_;
  }

 private:
  bool digits() {
    const char* start = p_;
    while (p_ < end_ && is_digit(*p_)) ++p_;
    return p_ > start;
  }
  bool integer_digits() {
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
      return true;
    }
    return p_ < end_ && *p_ != '0' && digits();
  }

  const char* p_;
  const char* end_;
};

bool scan_step(Scanner& s, MetricRecord& out) {
  constexpr long long kMinInt64 = std::numeric_limits<long long>::min();
  constexpr long long kMaxInt64 = std::numeric_limits<long long>::max();
  double comm = 0;
  if (!s.literal(",\"step\":") || !s.integer(out.step, kMinInt64, kMaxInt64) ||
      !s.literal(",\"samples\":") || !s.integer(out.samples, 0, kMaxInt64) ||
      !s.literal(",\"seconds\":") || !s.number(out.seconds, 0, kMaxRecordSeconds) ||
      !s.literal(",\"comm_seconds\":") || !s.number(comm, 0, kMaxRecordSeconds)) {
    return false;
  }
  out.comm_seconds = comm;
  if (s.literal(",\"data_seconds\":")) {
    double data = 0;
    if (!s.number(data, 0, kMaxRecordSeconds)) return false;
    out.data_seconds = data;
  }
  out.type = RecordType::kStep;
  return s.end(out.attempt);
}

bool scan_collective(Scanner& s, MetricRecord& out) {
  constexpr long long kMaxInt64 = std::numeric_limits<long long>::max();
  if (!s.literal(",\"seq\":") || !s.integer(out.seq, 0, kMaxInt64) || !s.literal(",\"op\":") ||
      !s.text(out.op) || !s.literal(",\"bytes\":") || !s.integer(out.bytes, 0, kMaxInt64) ||
      !s.literal(",\"phase\":\"")) {
    return false;
  }
  if (s.literal("enter\"")) {
    out.enter = true;
  } else if (!s.literal("exit\"")) {
    return false;
  }
  if (s.literal(",\"failed\":true")) {
    out.failed = true;
  } else {
    s.literal(",\"failed\":false");
  }
  out.type = RecordType::kCollective;
  return s.end(out.attempt);
}

// `out` as a default MetricRecord would be for the fields a step or collective record has: a
// record that held one of those types holds defaults in every other field (parse_metric_record
// sets only its type's), so those are reset alone; one of another type is replaced whole (rare:
// a file's binding, resource samples, intervals).
void clear_for_scan(MetricRecord& out) {
  if (out.type != RecordType::kStep && out.type != RecordType::kCollective) {
    out = MetricRecord{};
    return;
  }
  out.attempt = 0;
  out.step = out.samples = 0;
  out.seconds = 0;
  out.comm_seconds.reset();
  out.data_seconds.reset();
  out.seq = out.bytes = 0;
  out.op.clear();
  out.enter = out.failed = false;
}

}  // namespace

bool scan_metric_record(std::string_view line, MetricRecord& out) {
  Scanner s(line);
  if (!s.literal("{\"v\":2,\"type\":\"")) return false;
  const bool step = s.literal("step\"");
  if (!step && !s.literal("coll\"")) return false;
  clear_for_scan(out);
  long long rank = 0;
  out.version = 2;
  if (!s.literal(",\"time\":") || !s.number(out.time, 0, kMaxRecordSeconds) ||
      !s.literal(",\"rank\":") || !s.integer(rank, 0, kMaxIntField)) {
    return false;
  }
  out.rank = static_cast<int>(rank);
  return step ? scan_step(s, out) : scan_collective(s, out);
}

}  // namespace dtrain::records
