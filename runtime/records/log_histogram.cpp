#include "records/log_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dtrain::records {
namespace {

constexpr double kGamma = (1 + LogHistogram::kRelativeError) / (1 - LogHistogram::kRelativeError);
// Past INT64_MAX, the largest sample count a record holds.
constexpr double kLargest = 1e19;
constexpr long long kMaxCount = std::numeric_limits<long long>::max();

double log_gamma() {
  static const double v = std::log(kGamma);
  return v;
}

}  // namespace

int LogHistogram::lowest_bucket() {
  static const int v = static_cast<int>(std::ceil(std::log(kSmallest) / log_gamma()));
  return v;
}

int LogHistogram::highest_bucket() {
  static const int v = static_cast<int>(std::ceil(std::log(kLargest) / log_gamma()));
  return v;
}

int LogHistogram::bucket_of(double value) {
  const double i = std::ceil(std::log(value) / log_gamma());
  return static_cast<int>(
      std::clamp(i, static_cast<double>(lowest_bucket()), static_cast<double>(highest_bucket())));
}

double LogHistogram::value_of_bucket(int index) {
  return 2 * std::pow(kGamma, index) / (kGamma + 1);
}

void LogHistogram::add(double value, long long n) {
  if (n <= 0) return;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ = count_ > kMaxCount - n ? kMaxCount : count_ + n;
  sum_ += value * static_cast<double>(n);
  if (value <= kSmallest) {
    zeros_ += n;
    return;
  }
  bucket(bucket_of(value)) += n;
}

long long& LogHistogram::bucket(int i) {
  if (counts_.empty()) {
    lo_ = i;
    counts_.assign(1, 0);
  } else if (i < lo_) {
    counts_.insert(counts_.begin(), static_cast<std::size_t>(lo_ - i), 0);
    lo_ = i;
  } else if (i >= lo_ + static_cast<int>(counts_.size())) {
    counts_.resize(static_cast<std::size_t>(i - lo_ + 1), 0);
  }
  return counts_[static_cast<std::size_t>(i - lo_)];
}

void LogHistogram::merge(const LogHistogram& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ = count_ > kMaxCount - other.count_ ? kMaxCount : count_ + other.count_;
  sum_ += other.sum_;
  zeros_ += other.zeros_;
  for (std::size_t k = 0; k < other.counts_.size(); ++k) {
    if (other.counts_[k] == 0) continue;
    bucket(other.lo_ + static_cast<int>(k)) += other.counts_[k];
  }
}

double LogHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  // The 0-based index of the nearest-rank value, as report::percentile takes it.
  const double rank = std::ceil(p / 100.0 * static_cast<double>(count_));
  const auto index = std::min(static_cast<long long>(std::max(1.0, rank)) - 1, count_ - 1);
  // The smallest and the largest are known exactly.
  if (index == 0 || index < zeros_) return min_;
  if (index == count_ - 1) return max_;
  long long seen = zeros_;
  for (std::size_t k = 0; k < counts_.size(); ++k) {
    seen += counts_[k];
    if (index < seen) {
      return std::clamp(value_of_bucket(lo_ + static_cast<int>(k)), min_, max_);
    }
  }
  return max_;
}

nlohmann::ordered_json LogHistogram::to_json() const {
  nlohmann::ordered_json out = {{"sum", sum_}, {"min", min()}, {"max", max()}};
  if (zeros_ > 0) out["zeros"] = zeros_;
  if (!counts_.empty()) {
    out["lo"] = lo_;
    // A run of empty buckets is written as minus its length: two step times a factor of two
    // apart are 70 buckets apart.
    nlohmann::ordered_json counts = nlohmann::ordered_json::array();
    long long empty = 0;
    for (long long c : counts_) {
      if (c == 0) {
        ++empty;
        continue;
      }
      if (empty > 0) counts.push_back(-empty);
      empty = 0;
      counts.push_back(c);
    }
    out["counts"] = std::move(counts);
  }
  return out;
}

LogHistogram LogHistogram::from_json(const RecordFields& f) {
  constexpr double kMaxValue = std::numeric_limits<double>::max();
  LogHistogram h;
  h.sum_ = f.number("sum", 0, kMaxValue);
  h.min_ = f.number("min", 0, kMaxValue);
  h.max_ = f.number("max", h.min_, kMaxValue);
  if (f.has("zeros")) h.zeros_ = f.integer("zeros", 0, kMaxCount);
  long long count = h.zeros_;
  if (f.has("counts") || f.has("lo")) {
    h.lo_ = static_cast<int>(f.integer("lo", lowest_bucket(), highest_bucket()));
    const nlohmann::json& counts = f.field("counts");
    const auto room = static_cast<long long>(highest_bucket() - h.lo_ + 1);
    const auto bad = [&](const std::string& got) {
      f.fail("field \"counts\": expected the counts of buckets \"lo\" to at most " +
             std::to_string(highest_bucket()) + " (" + std::to_string(room) +
             " buckets), a count from 0 to " + std::to_string(kMaxCount) +
             " in all or -N for N empty buckets, starting and ending with a count; got " + got);
    };
    if (!counts.is_array() || counts.empty()) bad(shown_value(counts));
    for (const nlohmann::json& c : counts) {
      const auto n = integer_within(c, -room, kMaxCount);
      if (!n || *n > kMaxCount - count) bad(shown_value(c));
      const long long buckets = *n < 0 ? -*n : 1;
      if (static_cast<long long>(h.counts_.size()) + buckets > room) {
        bad("more than " + std::to_string(room) + " buckets");
      }
      if (*n < 0) {
        h.counts_.resize(h.counts_.size() + static_cast<std::size_t>(buckets), 0);
      } else {
        count += *n;
        h.counts_.push_back(*n);
      }
    }
    if (counts.front().get<long long>() < 0 || counts.back().get<long long>() < 0) {
      bad(shown_value(counts));
    }
  }
  if (count == 0) {
    f.fail("expected a histogram of at least one value (\"zeros\" or \"counts\"), got none");
  }
  h.count_ = count;
  return h;
}

}  // namespace dtrain::records
