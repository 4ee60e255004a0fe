#include "progress_line.hpp"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace dtrain::cli {

std::string progress_text(std::string_view what, std::size_t done, std::size_t total) {
  const std::size_t percent = total == 0 ? 100 : done * 100 / total;
  return "dtrain: reading " + std::to_string(total) + " " + std::string(what) + ": " +
         std::to_string(done) + " done (" + std::to_string(percent) + " %)";
}

ProgressLine::ProgressLine(std::string what, std::size_t total)
    : what_(std::move(what)), total_(total), terminal_(::isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() {
  // Erase the line, so what the command prints next starts on a clean one.
  if (shown_) std::fputs("\r\033[K", stderr);
}

void ProgressLine::update(std::size_t done) {
  if (!terminal_) return;
  const auto now = Clock::now();
  if (now - started_ < kProgressDelay || now - written_ < kProgressEvery) return;
  written_ = now;
  shown_ = true;
  std::fprintf(stderr, "\r%s\033[K", progress_text(what_, done, total_).c_str());
  std::fflush(stderr);
}

}  // namespace dtrain::cli
