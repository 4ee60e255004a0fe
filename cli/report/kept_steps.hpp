// What StatsBuilder (stats.hpp) keeps of one rank's steps, in memory that does not grow with the
// run: the last steps exactly (a step record each, or an interval record's steps together), and
// the older ones folded into at most kMaxStepBlocks blocks, each its steps' count, sums and one
// log-bucket histogram of their step times (records/log_histogram.hpp), as an interval record
// holds them. A 1,024-rank x 50,000-step run at full detail is then read in some 100 MiB instead of
// 80 bytes a step (4 GB; docs/benchmarks.md, "Records at scale"). What folding changes, and only
// for a rank past kFoldEntries steps: the percentiles come from the histogram (within 0.5 %, as of
// interval records), and a restart that resumed before the exact steps drops the blocks that
// began at or after its first step and keeps the one it fell in whole, as for an interval record.
// Pure.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "records/log_histogram.hpp"

namespace dtrain::report {

// A step record's numbers, or an interval record's (or a folded block's) steps together.
struct KeptSteps {
  long long step = 0;  // an interval's (a block's) first
  long long samples = 0;
  double seconds = 0;
  // A block's is the sum of its steps' comm_seconds each capped at its seconds (as rank_stats
  // counts a step's).
  std::optional<double> comm_seconds;
  std::optional<double> data_seconds;
  long long count = 1;                                     // steps: more than one for an interval
  std::shared_ptr<const records::LogHistogram> histogram;  // an interval's (block's) step times
};

// The exact steps kept are never fewer than kStragglerVerdictSteps (the straggler verdicts read the
// last ones): folding leaves at least kKeepEntries entries, or kKeepSteps steps.
inline constexpr std::size_t kKeepEntries = 256;
inline constexpr long long kKeepSteps = 512;
// Folding starts past twice those (so that it runs once every few hundred records).
inline constexpr std::size_t kFoldEntries = 2 * kKeepEntries;
inline constexpr long long kFoldSteps = 2 * kKeepSteps;
// Blocks: with the step times' histogram some hundreds of bytes each, 32 keep a rank under 40 KB.
inline constexpr std::size_t kMaxStepBlocks = 32;

class RankSteps {
 public:
  void push(KeptSteps k);
  // Drops the entries whose first step is at or after `first_step` (the work a crash lost, redone
  // from a checkpoint); returns the steps dropped.
  long long drop_from(long long first_step);
  // Blocks (oldest first) then exact entries, in the order added.
  const std::vector<KeptSteps>& entries() const { return entries_; }
  std::size_t blocks() const { return blocks_; }

 private:
  void fold();
  std::vector<KeptSteps> entries_;
  std::size_t blocks_ = 0;  // entries_[0, blocks_) are folded blocks
  long long tail_steps_ = 0;
};

// Consecutive entries (`steps`, not empty) as one block: the first's step, the sums (each step's
// comm_seconds capped at its seconds first) and one histogram of every step time.
KeptSteps block_of(std::span<const KeptSteps> steps);

}  // namespace dtrain::report
