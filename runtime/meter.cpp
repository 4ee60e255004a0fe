#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "dtrain/dtrain.hpp"

namespace dtrain {
namespace {

constexpr int kMetricSchemaVersion = 1;
// Records are small (~100 bytes): one write per ~600 steps keeps I/O out of the step time.
constexpr std::size_t kFlushBytes = 64 * 1024;

}  // namespace

Meter::Meter(const Context& ctx, std::string run_dir) : rank_(ctx.world().rank) {
  if (run_dir.empty()) run_dir = ctx.run_dir();
  if (run_dir.empty()) return;
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.jsonl", rank_);
  path_ = run_dir + "/" + name;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error(Error::Code::kSystem,
                "dtrain: meter: cannot open " + path_ + ": " + std::strerror(errno));
  }
  buffer_.reserve(kFlushBytes + 256);
}

Meter::~Meter() {
  try {
    flush();
  } catch (...) {
    // A destructor must not throw; a failed final write loses only the last records.
  }
  if (fd_ >= 0) ::close(fd_);
}

void Meter::record(std::int64_t step, std::int64_t samples, double seconds) {
  if (fd_ < 0) return;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  char line[256];
  const int n = std::snprintf(
      line, sizeof line,
      "{\"v\":%d,\"time\":%.6f,\"rank\":%d,\"step\":%lld,\"samples\":%lld,\"seconds\":%.9g}\n",
      kMetricSchemaVersion, now, rank_, static_cast<long long>(step),
      static_cast<long long>(samples), seconds);
  buffer_.append(line, static_cast<std::size_t>(n));
  if (buffer_.size() >= kFlushBytes) flush();
}

void Meter::flush() {
  std::size_t done = 0;
  while (fd_ >= 0 && done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = std::strerror(errno);
      buffer_.clear();
      throw Error(Error::Code::kSystem, "dtrain: meter: cannot write " + path_ + ": " + err);
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

}  // namespace dtrain
