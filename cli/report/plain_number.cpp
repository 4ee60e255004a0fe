#include "report/plain_number.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtrain::report {

std::string plain_number(double value) {
  if (!std::isfinite(value)) return "-";
  const double magnitude = std::fabs(value);
  int decimals = 0;
  if (magnitude >= 100) {
    decimals = 0;
  } else if (magnitude >= 10) {
    decimals = 1;
  } else if (magnitude >= 1) {
    decimals = 2;
  } else if (magnitude > 0) {
    // Three significant digits: 0.5 -> 3 decimals, 0.0123 -> 4; past nine the value reads as 0.
    decimals = std::min(9, 2 - static_cast<int>(std::floor(std::log10(magnitude))));
  }
  char buf[400];  // DBL_MAX has 309 digits before the point
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  if (out == "-0") out = "0";
  return out;
}

std::string duration_text(double seconds) {
  if (seconds >= 3600) {
    return std::to_string(static_cast<long long>(seconds / 3600)) + " h " +
           std::to_string(static_cast<long long>(std::fmod(seconds, 3600) / 60)) + " min";
  }
  if (seconds >= 60) {
    return std::to_string(static_cast<long long>(seconds / 60)) + " min " +
           std::to_string(static_cast<long long>(std::fmod(seconds, 60))) + " s";
  }
  // The unit is chosen after rounding: 0.99999 ms reads "1 ms", not "1000 us".
  if (std::round(seconds * 1e3) >= 1000 || seconds == 0) return plain_number(seconds) + " s";
  if (std::round(seconds * 1e6) >= 1000) return plain_number(seconds * 1e3) + " ms";
  return plain_number(seconds * 1e6) + " us";
}

std::string bytes_text(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return plain_number(bytes) + " " + kUnits[unit];
}

std::string percent_text(double share) { return plain_number(share * 100) + " %"; }

}  // namespace dtrain::report
