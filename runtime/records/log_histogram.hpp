// A histogram of positive values in log-spaced buckets, the same buckets for every record and every
// rank, so two histograms merge by adding counts and a percentile read from the merged one is
// within kRelativeError of the exact one: the interval records (records/step_interval.hpp) keep a
// rank's step times in one instead of a line per step. Bucket i holds the values in
// (gamma^(i-1), gamma^i], gamma = (1 + a) / (1 - a) with a = kRelativeError, and reads back as
// 2 gamma^i / (gamma + 1), which lies within a of any value in it (the scheme of DDSketch, Masson
// et al., VLDB 2019). Values at or below kSmallest (0 among them) count apart, as zeros. Held as
// the dense run of buckets between the lowest and the highest used: step times cluster, so a few
// dozen counts. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "records/record_fields.hpp"

namespace dtrain::records {

class LogHistogram {
 public:
  // Half a percent: a percentile from the histogram is within 1 % of the exact one with room to
  // spare, at about 70 buckets per factor of two.
  static constexpr double kRelativeError = 0.005;
  // A nanosecond: the clocks' resolution; below it a duration is 0.
  static constexpr double kSmallest = 1e-9;
  // The bucket indexes: from kSmallest to past INT64_MAX (a sample count).
  static int bucket_of(double value);
  static double value_of_bucket(int index);
  static int lowest_bucket();
  static int highest_bucket();

  // Adds `value` (finite, >= 0) `n` times.
  void add(double value, long long n = 1);
  void merge(const LogHistogram& other);

  long long count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ > 0 ? min_ : 0; }
  double max() const { return count_ > 0 ? max_ : 0; }
  // The nearest-rank percentile (p in 0..100, as report::percentile over the values added): the
  // representative of the bucket the ceil(p/100 n)-th smallest value fell in, kept within
  // [min, max]; 0 for none.
  double percentile(double p) const;

  // {"sum":S,"min":A,"max":B,"zeros":Z,"lo":I,"counts":[C...]}: "zeros" only when above 0, "lo"
  // and "counts" only when a value was above kSmallest.
  nlohmann::ordered_json to_json() const;
  // Reads what to_json() wrote; a bad field is refused through `fields`'s error, naming the field
  // ("lo", "counts", ...) and what was expected. The count is the zeros and counts together.
  static LogHistogram from_json(const RecordFields& fields);

  bool operator==(const LogHistogram& other) const = default;

 private:
  // Bucket `i`'s count, counts_ grown (at either end) to hold it: the one place add and merge
  // place a count.
  long long& bucket(int i);

  long long count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
  long long zeros_ = 0;
  int lo_ = 0;                     // the index of counts_[0]
  std::vector<long long> counts_;  // empty: no value above kSmallest
};

}  // namespace dtrain::records
