#include "report/kept_steps.hpp"

#include <algorithm>
#include <span>
#include <utility>

#include "report/stats_stages.hpp"

namespace dtrain::report {
namespace {

std::optional<double> sum_of(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a) return b;
  if (!b) return a;
  return *a + *b;
}

// A step's (an interval's) comm_seconds capped at its seconds, as rank_stats counts it: a block
// holds only sums, so the cap is applied before they are added.
std::optional<double> capped_comm(const KeptSteps& k) {
  if (!k.comm_seconds) return std::nullopt;
  return std::min(*k.comm_seconds, k.seconds);
}

}  // namespace

KeptSteps block_of(std::span<const KeptSteps> steps) {
  KeptSteps out;
  out.step = steps.front().step;
  out.count = 0;
  records::LogHistogram h;
  for (const KeptSteps& k : steps) {
    if (k.histogram) {
      h.merge(*k.histogram);
    } else {
      h.add(k.seconds);
    }
    out.comm_seconds = sum_of(out.comm_seconds, capped_comm(k));
    out.data_seconds = sum_of(out.data_seconds, k.data_seconds);
    add_saturating(out.samples, k.samples);
    out.seconds += k.seconds;
    out.count += k.count;
  }
  out.histogram = std::make_shared<const records::LogHistogram>(std::move(h));
  return out;
}

void RankSteps::push(KeptSteps k) {
  tail_steps_ += k.count;
  entries_.push_back(std::move(k));
  if (entries_.size() - blocks_ > kFoldEntries || tail_steps_ > kFoldSteps) fold();
}

long long RankSteps::drop_from(long long first_step) {
  long long dropped = 0;
  while (!entries_.empty() && entries_.back().step >= first_step) {
    dropped += entries_.back().count;
    if (entries_.size() > blocks_) {
      tail_steps_ -= entries_.back().count;
    } else {
      --blocks_;
    }
    entries_.pop_back();
  }
  return dropped;
}

// The oldest exact entries become one block, leaving at least kKeepEntries entries or kKeepSteps
// steps exact; then, past kMaxStepBlocks, two neighbouring blocks become one: the pair with the
// fewest steps for their distance from the newest block, so that blocks grow with age and a
// restart (which resumes from a recent checkpoint) most often falls in a small one.
void RankSteps::fold() {
  std::size_t end = blocks_;  // entries_[blocks_, end) are folded
  long long steps = tail_steps_;
  while (end < entries_.size() &&
         (entries_.size() - end > kKeepEntries || steps - entries_[end].count >= kKeepSteps)) {
    steps -= entries_[end].count;
    ++end;
  }
  if (end == blocks_) return;  // one long interval holds most of the exact steps: it stays
  tail_steps_ = steps;
  entries_[blocks_] = block_of(std::span(entries_).subspan(blocks_, end - blocks_));
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(blocks_) + 1,
                 entries_.begin() + static_cast<std::ptrdiff_t>(end));
  ++blocks_;
  while (blocks_ > kMaxStepBlocks) {
    std::size_t best = 0;
    double best_score = 0;
    for (std::size_t i = 0; i + 1 < blocks_; ++i) {
      const double score = static_cast<double>(entries_[i].count + entries_[i + 1].count) /
                           static_cast<double>(blocks_ - i);
      if (i == 0 || score < best_score) {
        best = i;
        best_score = score;
      }
    }
    entries_[best] = block_of(std::span(entries_).subspan(best, 2));
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    --blocks_;
  }
}

}  // namespace dtrain::report
