#include "records/log_line.hpp"

#include <cmath>
#include <cstdio>

namespace dtrain::records {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, int& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2));
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, unsigned& out) {
  if (pos + n > s.size()) return false;
  unsigned v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    const unsigned c = static_cast<unsigned char>(s[i]) - '0';
    if (c > 9) return false;
    v = v * 10 + c;
  }
  out = v;
  return true;
}

// "YYYY-MM-DDTHH:MM:SS" at the start of `s` (T or, when `allow_space`, a space), validated.
bool parse_date_time(std::string_view s, bool allow_space, std::int64_t& seconds) {
  unsigned year, month, day, hour, minute, second;
  if (s.size() < 19 || !digits(s, 0, 4, year) || s[4] != '-' || !digits(s, 5, 2, month) ||
      s[7] != '-' || !digits(s, 8, 2, day) || !(s[10] == 'T' || (allow_space && s[10] == ' ')) ||
      !digits(s, 11, 2, hour) || s[13] != ':' || !digits(s, 14, 2, minute) || s[16] != ':' ||
      !digits(s, 17, 2, second)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return false;
  }
  seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return true;
}

}  // namespace

std::optional<std::int64_t> parse_log_timestamp(std::string_view line) {
  // Fixed layout: the hot path of `dtrain logs` calls this once per line.
  if (line.size() <= kLogTimestampWidth || line[19] != '.' || line[26] != 'Z' || line[27] != ' ') {
    return std::nullopt;
  }
  std::int64_t seconds;
  unsigned micros;
  if (!parse_date_time(line, false, seconds) || !digits(line, 20, 6, micros)) return std::nullopt;
  return seconds * 1000000 + micros;
}

std::string format_log_time(std::int64_t micros) {
  std::int64_t secs = micros / 1000000;
  std::int64_t frac = micros % 1000000;
  if (frac < 0) {
    frac += 1000000;
    secs -= 1;
  }
  std::int64_t days = secs / 86400;
  std::int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  int y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06dZ", y, m, d,
                static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60),
                static_cast<int>(rem % 60), static_cast<int>(frac));
  return buf;
}

std::int64_t unix_seconds_to_micros(double seconds) {
  return static_cast<std::int64_t>(std::llround(seconds * 1e6));
}

std::optional<std::int64_t> parse_rfc3339(std::string_view text) {
  std::int64_t seconds;
  if (!parse_date_time(text, true, seconds)) return std::nullopt;
  std::size_t pos = 19;
  std::int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::size_t n = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (n == 6) return std::nullopt;
      micros = micros * 10 + (text[pos] - '0');
      ++pos;
      ++n;
    }
    if (n == 0) return std::nullopt;
    for (; n < 6; ++n) micros *= 10;
  }
  const std::string_view zone = text.substr(pos);
  std::int64_t offset = 0;
  if (zone == "Z" || zone == "z") {
    offset = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    unsigned hh, mm;
    if (!digits(zone, 1, 2, hh) || !digits(zone, 4, 2, mm) || hh > 23 || mm > 59) {
      return std::nullopt;
    }
    offset = (zone[0] == '+' ? 1 : -1) * static_cast<std::int64_t>(hh * 3600 + mm * 60);
  } else {
    return std::nullopt;
  }
  return (seconds - offset) * 1000000 + micros;
}

std::string format_log_time(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  return format_log_time(
      static_cast<std::int64_t>(duration_cast<microseconds>(t.time_since_epoch()).count()));
}

void LineSplitter::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    auto nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(bytes);
      while (partial_.size() >= kMaxLine) {
        sink_(std::string_view(partial_).substr(0, kMaxLine));
        partial_.erase(0, kMaxLine);
      }
      return;
    }
    if (partial_.empty()) {
      sink_(bytes.substr(0, nl));
    } else {
      partial_.append(bytes.substr(0, nl));
      sink_(partial_);
      partial_.clear();
    }
    bytes.remove_prefix(nl + 1);
  }
}

void LineSplitter::finish() {
  if (!partial_.empty()) {
    sink_(partial_);
    partial_.clear();
  }
}

}  // namespace dtrain::records
