// Picks the piece size in which a large allreduce goes to MPI, by measuring. No single size is
// best: on the project's VM, 1 MiB pieces run 256 MiB at 3.5-3.7 GB/s in one state of the machine
// and 16 MiB pieces run it 1.5x faster than 1 MiB in the other, where 1 MiB is 1.7x slower
// (docs/benchmarks.md); real networks differ again. Like Horovod's autotuner, it tries each
// candidate for a few calls, keeps the fastest for a while, then tries them all again.
//
// Trials compare the candidates on messages of one size (the first of at least kMinTrialBytes in
// a round, where every candidate cuts differently), so that no candidate is judged on other
// messages than the rest; other large messages meanwhile use the size chosen last (1 MiB at
// first). Every rank must cut its messages the same way, so the tuner is driven only by what all
// ranks share: the sequence of large allreduces (which every rank calls in the same order) decides
// which candidate a call uses, and the decision is taken from rates that the ranks have agreed on
// (the caller reduces rates() with a minimum across ranks and passes the result to decide()). Pure
// logic, no I/O.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace dtrain::runtime {

class PieceTuner {
 public:
  static constexpr std::array<std::size_t, 3> kCandidates = {
      std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{16} << 20};
  static constexpr std::size_t kMinTrialBytes = kCandidates.back();
  static constexpr int kTrialsPerCandidate = 2;
  static constexpr int kExploitCalls = 100;  // calls on the chosen size before trying all again

  // `fixed` != 0: always that size (DTRAIN_PIECE_BYTES), no trials.
  explicit PieceTuner(std::size_t fixed = 0) : fixed_(fixed) {}

  // The piece size for an allreduce of `bytes` (more than one 1 MiB piece).
  std::size_t piece(std::size_t bytes) const;
  // Records how long that allreduce of `bytes` took. Returns true when a round of trials is
  // complete: the caller then agrees on rates() across ranks and calls decide().
  bool record(std::size_t bytes, double seconds);
  // Bytes per second each candidate reached in the round just finished.
  std::array<double, kCandidates.size()> rates() const;
  // Chooses the candidate with the highest agreed rate (the first on a tie) for the next
  // kExploitCalls calls.
  void decide(const std::array<double, kCandidates.size()>& agreed);

  bool tuning() const { return fixed_ == 0; }
  std::size_t chosen() const { return kCandidates[chosen_]; }

 private:
  static constexpr int kTrialCalls = kTrialsPerCandidate * static_cast<int>(kCandidates.size());

  std::size_t fixed_;
  bool exploring_ = true;
  bool trial(std::size_t bytes) const {
    return exploring_ && bytes >= kMinTrialBytes && (trial_bytes_ == 0 || bytes == trial_bytes_);
  }

  int call_ = 0;                 // trials in this round, or calls since the last decision
  std::size_t trial_bytes_ = 0;  // the message size this round's trials use
  std::size_t chosen_ = 0;
  std::array<double, kCandidates.size()> bytes_{};
  std::array<double, kCandidates.size()> seconds_{};
};

}  // namespace dtrain::runtime
