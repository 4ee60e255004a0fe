#include "comm/algorithms/piece_tuner.hpp"

namespace dtrain::runtime {

std::size_t PieceTuner::piece(std::size_t bytes) const {
  if (fixed_ != 0) return fixed_;
  if (!trial(bytes)) return kCandidates[chosen_];
  return kCandidates[static_cast<std::size_t>(call_) % kCandidates.size()];
}

bool PieceTuner::record(std::size_t bytes, double seconds) {
  if (fixed_ != 0) return false;
  if (!exploring_) {
    if (++call_ >= kExploitCalls) {
      exploring_ = true;
      call_ = 0;
      trial_bytes_ = 0;
      bytes_ = {};
      seconds_ = {};
    }
    return false;
  }
  if (!trial(bytes)) return false;
  trial_bytes_ = bytes;
  const std::size_t candidate = static_cast<std::size_t>(call_) % kCandidates.size();
  bytes_[candidate] += static_cast<double>(bytes);
  seconds_[candidate] += seconds;
  return ++call_ == kTrialCalls;
}

std::array<double, PieceTuner::kCandidates.size()> PieceTuner::rates() const {
  std::array<double, kCandidates.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = seconds_[i] > 0 ? bytes_[i] / seconds_[i] : 0.0;
  }
  return out;
}

void PieceTuner::decide(const std::array<double, kCandidates.size()>& agreed) {
  chosen_ = 0;
  for (std::size_t i = 1; i < agreed.size(); ++i) {
    if (agreed[i] > agreed[chosen_]) chosen_ = i;
  }
  exploring_ = false;
  call_ = 0;
}

}  // namespace dtrain::runtime
