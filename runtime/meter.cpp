// Per-rank JSON Lines metric records (schema: docs/metrics.md).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "dtrain/dtrain.hpp"

namespace dtrain {
namespace {

constexpr int kSchemaVersion = 1;
// A record is ~100 bytes: one write() per ~600 steps keeps I/O out of the step time, and at most
// this much is lost if the process dies without flushing.
constexpr std::size_t kFlushBytes = 64 * 1024;

std::string rank_file(const std::string& dir, int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.jsonl", rank);
  return dir + "/" + name;
}

}  // namespace

Meter::Meter(const Context& ctx, std::string run_dir) : rank_(ctx.world().rank) {
  if (run_dir.empty()) {
    if (const char* env = std::getenv("DTRAIN_RUN_DIR")) run_dir = env;
  }
  if (run_dir.empty()) return;  // not in a dtrain run: disabled
  path_ = rank_file(run_dir, rank_);
  // Appending: a restarted run continues the same file, and every record stays a whole line.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    throw Error(Error::Code::kSystem, "dtrain: meter: cannot open " + path_ + ": " +
                                          std::strerror(err) +
                                          "; expected an existing, writable run directory");
  }
  buffer_.reserve(kFlushBytes + 512);
}

Meter::Meter(Meter&& other) noexcept
    : rank_(other.rank_),
      fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      buffer_(std::move(other.buffer_)) {
  other.path_.clear();
  other.buffer_.clear();
}

Meter& Meter::operator=(Meter&& other) noexcept {
  if (this != &other) {
    close_file();
    rank_ = other.rank_;
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    buffer_ = std::move(other.buffer_);
    other.path_.clear();
    other.buffer_.clear();
  }
  return *this;
}

Meter::~Meter() { close_file(); }

void Meter::close_file() noexcept {
  if (fd_ < 0) return;
  try {
    flush();
  } catch (...) {
    // A destructor cannot throw and core code does not print: the last records are lost. A
    // caller that must know calls flush() itself first.
  }
  ::close(fd_);
  fd_ = -1;
}

void Meter::record(std::int64_t step, std::int64_t samples, double seconds) {
  if (samples < 0 || !std::isfinite(seconds) || seconds < 0) {
    // A negative or non-finite value is a bug in the caller's timing, and JSON has no NaN.
    char got[96];
    std::snprintf(got, sizeof got, "samples=%lld seconds=%g", static_cast<long long>(samples),
                  seconds);
    throw Error(Error::Code::kInvalid,
                std::string("dtrain: meter: record: bad measurement; expected samples >= 0 and "
                            "finite seconds >= 0, got ") +
                    got);
  }
  if (fd_ < 0) return;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // ordered_json keeps the documented field order; dump() writes the shortest text that reads
  // back as the same double.
  const nlohmann::ordered_json line = {{"v", kSchemaVersion}, {"time", now},
                                       {"rank", rank_},       {"step", step},
                                       {"samples", samples},  {"seconds", seconds}};
  buffer_ += line.dump();
  buffer_ += '\n';
  if (buffer_.size() >= kFlushBytes) flush();
}

void Meter::flush() {
  std::size_t done = 0;
  while (fd_ >= 0 && done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      buffer_.erase(0, done);  // keep what was not written, for a later try
      throw Error(Error::Code::kSystem,
                  "dtrain: meter: cannot write " + path_ + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

}  // namespace dtrain
