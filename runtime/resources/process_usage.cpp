#include "resources/process_usage.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <limits>

namespace dtrain::runtime {
namespace {

// The next whole number of `text` from `at` on, after spaces; moves `at` past it.
std::optional<std::int64_t> next_number(std::string_view text, std::size_t& at) {
  while (at < text.size() && text[at] == ' ') ++at;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (ec != std::errc() || value < 0) return std::nullopt;
  at = static_cast<std::size_t>(end - text.data());
  return value;
}

}  // namespace

std::optional<std::int64_t> statm_resident_bytes(std::string_view statm, long page_bytes) {
  std::size_t at = 0;
  if (!next_number(statm, at)) return std::nullopt;  // the whole address space
  const std::optional<std::int64_t> pages = next_number(statm, at);
  if (!pages || page_bytes <= 0) return std::nullopt;
  if (*pages > std::numeric_limits<std::int64_t>::max() / page_bytes) return std::nullopt;
  return *pages * page_bytes;
}

double cpu_percent(double cpu_seconds_before, double cpu_seconds_after, double wall_seconds) {
  if (!(wall_seconds > 0) || !(cpu_seconds_after >= cpu_seconds_before)) return 0;
  return (cpu_seconds_after - cpu_seconds_before) / wall_seconds * 100.0;
}

ProcessUsage read_process_usage() {
  ProcessUsage u;
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) == 0) {
    const auto seconds = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    };
    u.cpu_seconds = seconds(ru.ru_utime) + seconds(ru.ru_stime);
  }
  // A few dozen bytes: one read, no stdio buffer.
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char text[256];
    ssize_t n;
    do {
      n = ::read(fd, text, sizeof text - 1);
    } while (n < 0 && errno == EINTR);
    ::close(fd);
    if (n > 0) {
      u.rss_bytes = statm_resident_bytes(std::string_view(text, static_cast<std::size_t>(n)),
                                         ::sysconf(_SC_PAGESIZE));
    }
  }
  return u;
}

}  // namespace dtrain::runtime
