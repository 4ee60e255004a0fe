// A progress line on the terminal for a reader that runs more than a few seconds (`stats`,
// `report`, `timeline`, `logs --hang` / `--first-error` of a large run directory): written to
// stderr only when stderr is a terminal, so output piped or redirected to a file never holds it,
// first after kProgressDelay (a quick read shows nothing), rewritten in place (a carriage return)
// at most every kProgressEvery, and erased when the reading ends.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace dtrain::cli {

inline constexpr std::chrono::milliseconds kProgressDelay{2000};
inline constexpr std::chrono::milliseconds kProgressEvery{250};

// "dtrain: reading 1024 metric files: 312 done (30 %)". Pure.
std::string progress_text(std::string_view what, std::size_t done, std::size_t total);

class ProgressLine {
 public:
  // `what`: the plural noun of the things read ("metric files").
  ProgressLine(std::string what, std::size_t total);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(std::size_t done);

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  std::size_t total_;
  bool terminal_;
  bool shown_ = false;
  Clock::time_point started_ = Clock::now();
  Clock::time_point written_{};
};

}  // namespace dtrain::cli
