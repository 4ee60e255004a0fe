// The log-bucket histogram of interval records: percentiles within 1 % of the exact nearest-rank
// ones, merging by adding counts, and its JSON read back or refused naming the field.
#include "records/log_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace dtrain::records {
namespace {

double exact_percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  const auto i = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return v[std::min(i, v.size() - 1)];
}

LogHistogram parsed(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  const RecordFields f(j, "f:1 field \"seconds\"",
                       [](const std::string& m) { throw std::runtime_error(m); });
  return LogHistogram::from_json(f);
}

std::string refusal(const std::string& text) {
  try {
    parsed(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LogHistogram, PercentilesAreWithinOnePercentOfTheExactOnes) {
  std::mt19937 random(7);
  // Step times around 50 ms with a slow tail, microsecond ones, and integers (sample counts).
  std::lognormal_distribution<double> steps(std::log(0.05), 0.3);
  std::exponential_distribution<double> tail(2.0);
  for (int shape = 0; shape < 3; ++shape) {
    std::vector<double> values;
    LogHistogram h;
    for (int i = 0; i < 20000; ++i) {
      double v = shape == 0 ? steps(random) : shape == 1 ? 1e-6 * (1 + tail(random)) : 32 + i % 5;
      values.push_back(v);
      h.add(v);
    }
    for (double p : {0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 100.0}) {
      const double exact = exact_percentile(values, p);
      EXPECT_NEAR(h.percentile(p), exact, 0.01 * exact) << "shape " << shape << " p" << p;
    }
    EXPECT_EQ(h.count(), 20000);
    EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
    EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
  }
}

TEST(LogHistogram, MergedEqualsOneOfEverything) {
  LogHistogram a, b, all;
  for (int i = 1; i <= 300; ++i) {
    const double v = 0.001 * i;
    (i % 3 == 0 ? a : b).add(v);
    all.add(v);
  }
  a.add(0);  // zeros count apart
  all.add(0);
  LogHistogram merged = b;
  merged.merge(a);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.percentile(50), all.percentile(50));
  EXPECT_EQ(merged.percentile(95), all.percentile(95));
  EXPECT_EQ(merged.min(), 0);
  EXPECT_NEAR(merged.sum(), all.sum(), 1e-12);
  auto written = merged.to_json(), expected = all.to_json();
  written.erase("sum");  // added in another order: equal to the last bit or two
  expected.erase("sum");
  EXPECT_EQ(written, expected);
}

TEST(LogHistogram, ZerosAndEmpty) {
  LogHistogram h;
  EXPECT_EQ(h.percentile(50), 0);
  h.add(0, 3);
  h.add(0.5);
  EXPECT_EQ(h.count(), 4);
  EXPECT_EQ(h.percentile(50), 0);
  EXPECT_EQ(h.percentile(100), 0.5);
  EXPECT_EQ(h.to_json().dump(),
            R"({"sum":0.5,"min":0.0,"max":0.5,"zeros":3,"lo":-69,"counts":[1]})");
}

TEST(LogHistogram, ReadsBackWhatItWrote) {
  LogHistogram h;
  for (double v : {0.0, 0.01, 0.011, 0.5, 7.0}) h.add(v);
  EXPECT_EQ(parsed(h.to_json().dump()), h);
  LogHistogram runs;  // two values a factor of two apart: 68 empty buckets between, written -68
  runs.add(0.125);
  runs.add(0.25);
  EXPECT_EQ(runs.to_json()["counts"].dump(), "[1,-68,1]");
  EXPECT_EQ(parsed(runs.to_json().dump()), runs);
}

TEST(LogHistogram, RefusesNamingTheField) {
  EXPECT_EQ(refusal(R"({"sum":1,"min":1,"max":1})"),
            "dtrain: f:1 field \"seconds\": expected a histogram of at least one value (\"zeros\" "
            "or \"counts\"), got none");
  const std::string expected =
      "dtrain: f:1 field \"seconds\": field \"counts\": expected the counts of buckets \"lo\" to "
      "at most 4375 (4376 buckets), a count from 0 to 9223372036854775807 in all or -N for N "
      "empty buckets, starting and ending with a count; got ";
  EXPECT_EQ(refusal(R"({"sum":1,"min":1,"max":1,"lo":0,"counts":[]})"), expected + "[]");
  EXPECT_EQ(refusal(R"({"sum":1,"min":1,"max":1,"lo":0,"counts":[1,-1]})"), expected + "[1,-1]");
  EXPECT_EQ(
      refusal(R"({"sum":1,"min":1,"max":1,"lo":4370,"counts":[1,-5,1]})"),
      "dtrain: f:1 field \"seconds\": field \"counts\": expected the counts of buckets "
      "\"lo\" to at most 4375 (6 buckets), a count from 0 to 9223372036854775807 in all or -N "
      "for N empty buckets, starting and ending with a count; got more than 6 buckets");
  EXPECT_EQ(refusal(R"({"sum":1,"min":1,"max":1,"lo":0,"counts":[1.5]})"), expected + "1.5");
  EXPECT_EQ(refusal(R"({"sum":1,"min":2,"max":1,"zeros":1})"),
            "dtrain: f:1 field \"seconds\": field \"max\": expected a number from 2 to "
            "1.79769e+308, got 1");
}

}  // namespace
}  // namespace dtrain::records
