#include "rank_log.hpp"

#include <cstdio>
#include <ctime>

namespace dtrain::cli {

std::string format_log_timestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto micros = duration_cast<microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(micros / 1000000);
  long frac = static_cast<long>(micros % 1000000);
  if (frac < 0) {
    frac += 1000000;
    secs -= 1;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

std::string rank_file_name(int rank, std::string_view extension) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%05d.", rank);
  return std::string(buf) + std::string(extension);
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

}  // namespace dtrain::cli
