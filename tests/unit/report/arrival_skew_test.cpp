// Stragglers named from the collectives' waits alone (no Meter): the rank that arrives last waits
// least; matched by sequence number across 2, 3, 8 and 1,024 ranks whose clocks disagree by
// hours, a rank slowed 1.25x is named, noise and microsecond collectives name nobody.
#include "report/arrival_skew.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "report/stats.hpp"

namespace dtrain::report {
namespace {

constexpr std::size_t kW = 200;  // records::kArrivalWindowCalls

// `calls` collectives, one per step: rank r computes compute[r] seconds (times 1 +- `noise`),
// then enters; the collective ends `transfer` after the last arrival. Each rank's clock is off by
// r hours, so only durations can be compared. Windows of 200 as the live page holds them.
std::vector<RankArrivals> simulate(std::vector<double> compute, std::size_t calls, double noise,
                                   unsigned seed = 1, double transfer = 200e-6) {
  const std::size_t n = compute.size();
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<RankArrivals> out(n);
  for (std::size_t r = 0; r < n; ++r) {
    out[r].rank = static_cast<int>(r);
    out[r].host = "node" + std::to_string(r / 4);
  }
  double t = 0;
  std::vector<double> arrive(n);
  for (std::size_t c = 0; c < calls; ++c) {
    for (std::size_t r = 0; r < n; ++r) arrive[r] = t + compute[r] * jitter(random);
    const double end = *std::max_element(arrive.begin(), arrive.end()) + transfer;
    for (std::size_t r = 0; r < n; ++r) {
      const auto clock = [&](double s) {
        return static_cast<std::int64_t>((s + 3600.0 * static_cast<double>(r)) * 1e6);
      };
      if (c % kW == 0) {
        ArrivalWindowData w;
        w.index = c / kW;
        w.first_enter_us = clock(arrive[r]);
        out[r].windows.push_back(w);
      }
      auto& w = out[r].windows.back();
      w.waits_us.push_back(static_cast<std::uint32_t>((end - arrive[r]) * 1e6));
      w.last_leave_us = clock(end);
    }
    t = end;
  }
  return out;
}

// The verdict when it names a straggler.
std::optional<ArrivalVerdict> named(const std::vector<RankArrivals>& ranks) {
  auto v = judge_arrivals(ranks);
  if (v && !v->straggler) return std::nullopt;
  return v;
}

std::vector<double> ranks_of(std::size_t n, double seconds) {
  return std::vector<double>(n, seconds);
}

TEST(ArrivalSkew, AtTwoRanksTheRankSlowedAQuarterIsNamed) {
  auto compute = ranks_of(2, 0.040);
  compute[1] = 0.050;
  const auto v = named(simulate(compute, 100, 0.02));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->rank, 1);
  EXPECT_EQ(v->host, "node0");
  EXPECT_EQ(v->calls, 100u);
  EXPECT_EQ(v->last, 100u);
  EXPECT_NEAR(v->lag_seconds, 0.010, 0.002);
  EXPECT_NEAR(v->lag_share, 0.2, 0.03);
  EXPECT_LT(v->waited_seconds, v->others_waited_seconds / 10);
}

TEST(ArrivalSkew, AmongThreeEightAnd1024RanksTheSlowOneIsNamedAlone) {
  for (const std::size_t n : {3u, 8u, 1024u}) {
    auto compute = ranks_of(n, 0.040);
    const std::size_t slow = n / 2 + 1;
    compute[slow] = 0.050;
    const auto v = named(simulate(compute, 450, 0.05, static_cast<unsigned>(n)));
    ASSERT_TRUE(v.has_value()) << n << " ranks";
    EXPECT_EQ(v->rank, static_cast<int>(slow)) << n << " ranks";
    EXPECT_EQ(v->calls, kArrivalVerdictCalls) << "the last 200 of 450";
    EXPECT_GE(v->last, 190u) << n << " ranks";
  }
}

TEST(ArrivalSkew, RanksThatDifferOnlyByNoiseNameNobody) {
  for (const std::size_t n : {2u, 3u, 8u, 1024u}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const auto v = judge_arrivals(simulate(ranks_of(n, 0.040), 400, 0.05, seed));
      ASSERT_TRUE(v.has_value()) << "enough collectives to say so";
      EXPECT_FALSE(v->straggler) << n << " ranks, seed " << seed;
    }
  }
}

TEST(ArrivalSkew, ARankAlwaysLastByTooLittleIsNoStraggler) {
  // Rank 0 arrives last every time, 3 % later: not the 10 % the others would lose.
  auto compute = ranks_of(4, 0.040);
  compute[0] = 0.0412;
  EXPECT_FALSE(named(simulate(compute, 200, 0.0)).has_value());
  // Microsecond collectives: twice as slow is still under the floor of 0.5 ms per collective.
  auto fast = ranks_of(2, 10e-6);
  fast[1] = 20e-6;
  EXPECT_FALSE(named(simulate(fast, 200, 0.0, 1, 2e-6)).has_value());
}

TEST(ArrivalSkew, TooFewCollectivesInCommonNameNobody) {
  auto compute = ranks_of(2, 0.040);
  compute[1] = 0.080;
  EXPECT_FALSE(judge_arrivals(simulate(compute, kArrivalMinCalls - 1, 0.0)).has_value());
  EXPECT_TRUE(named(simulate(compute, kArrivalMinCalls, 0.0)).has_value());
  EXPECT_FALSE(judge_arrivals({simulate(compute, 100, 0.0)[0]}).has_value()) << "one rank";
}

TEST(ArrivalSkew, WindowsAreMatchedByTheirNumberNotByTheirPlace) {
  // As loggers read at different moments: rank 0 published windows 0-2 whole, rank 1 windows
  // 1-3 and a part of 4. Only windows 1 and 2 are common, and the newest 200 of them compared.
  auto compute = ranks_of(2, 0.040);
  compute[0] = 0.050;
  auto ranks = simulate(compute, 4 * kW + 50, 0.02);
  ranks[0].windows.resize(3);
  ranks[1].windows.erase(ranks[1].windows.begin());
  std::reverse(ranks[1].windows.begin(), ranks[1].windows.end());
  const auto v = named(ranks);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->rank, 0);
  EXPECT_EQ(v->calls, 200u);
  // Rank 1's windows 3 and 4 alone: no collective in common, so nothing to compare.
  ranks[1].windows.resize(2);
  EXPECT_FALSE(judge_arrivals(ranks).has_value()) << "no window in common";
}

TEST(ArrivalSkew, TheVerdictReadsAsOneLine) {
  ArrivalVerdict v;
  v.rank = 1;
  v.host = "node2";
  v.last = 192;
  v.calls = 200;
  v.lag_seconds = 0.11;
  v.lag_share = 0.2;
  v.waited_seconds = 0.02;
  v.others_waited_seconds = 4.4;
  EXPECT_EQ(arrival_verdict_text(v),
            "rank 1 on node2 arrived last in 96 % of the last 200 collectives, 110 ms after the "
            "median: a straggler; the others waited for it 20 % of the time (it waited 20 ms in "
            "them, the median of the others 4.4 s)");
}

TEST(ArrivalSkew, TheFileReadsBackAsWritten) {
  RankArrivals a;
  a.rank = 7;
  a.host = "node3";
  a.windows.push_back({12, 1000, 5000, {1, 2, 3}});
  a.windows.push_back({8, -5, 9, {4000000000u}});
  const std::string text = format_arrivals(a);
  EXPECT_EQ(text,
            "arrivals rank=7 host=node3\n"
            "window index=12 first_enter_us=1000 last_leave_us=5000 waits_us=1,2,3\n"
            "window index=8 first_enter_us=-5 last_leave_us=9 waits_us=4000000000\n");
  const auto back = parse_arrivals(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rank, 7);
  EXPECT_EQ(back->host, "node3");
  ASSERT_EQ(back->windows.size(), 2u);
  EXPECT_EQ(back->windows[0].waits_us, (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_EQ(back->windows[1].first_enter_us, -5);
  EXPECT_FALSE(parse_arrivals("wait rank=1\n").has_value());
  EXPECT_FALSE(parse_arrivals("arrivals rank=1 host=a\nwindow index=1 waits_us=1,x\n"));
  EXPECT_FALSE(parse_arrivals("").has_value());
  EXPECT_EQ(back->doing, Activity::kUnknown) << "a file without doing=";
  a.doing = Activity::kSleeping;
  const std::string sleeping = format_arrivals(a);
  EXPECT_EQ(sleeping.substr(0, sleeping.find('\n')), "arrivals rank=7 doing=sleeping host=node3");
  ASSERT_TRUE(parse_arrivals(sleeping));
  EXPECT_EQ(parse_arrivals(sleeping)->doing, Activity::kSleeping);
  EXPECT_LT(parse_arrivals(sleeping)->cpu_share, 0) << "a file without cpu=";
  a.cpu_share = 0.723;
  const std::string share = format_arrivals(a);
  EXPECT_EQ(share.substr(0, share.find('\n')),
            "arrivals rank=7 doing=sleeping cpu=0.723 host=node3");
  ASSERT_TRUE(parse_arrivals(share));
  EXPECT_DOUBLE_EQ(parse_arrivals(share)->cpu_share, 0.723);
  EXPECT_FALSE(parse_arrivals("arrivals rank=1 cpu=1.5 host=a\n")) << "a share above 1";
}

TEST(ArrivalSkew, TheLiveLineSaysWhatTheStragglerDoes) {
  // 3 ranks whose rank 1 takes 50 ms a step to the others' 40 ms; its logger saw it asleep.
  auto ranks = simulate(
      [] {
        auto compute = ranks_of(3, 0.040);
        compute[1] = 0.050;
        return compute;
      }(),
      200, 0.02);
  ranks[1].doing = Activity::kSleeping;
  const auto v = judge_arrivals(ranks);
  ASSERT_TRUE(v && v->straggler);
  std::optional<NamedStraggler> named;
  const std::string line = straggler_change_line(v, named);
  const std::string head = "dtrain: straggler: " + arrival_verdict_text(*v);
  const std::string cut = ": a straggler; ";
  ASSERT_NE(head.find(cut), std::string::npos);
  EXPECT_EQ(line, head.substr(0, head.find(cut)) +
                      ": a straggler; it is sleeping outside collectives (not computing); " +
                      head.substr(head.find(cut) + cut.size()));
  // Afterwards (stats, the report) the verdict says nothing of what a rank that ended does.
  EXPECT_EQ(arrival_verdict_text(*v).find("sleeping"), std::string::npos);

  // With the ranks' shares on a CPU: the straggler's against the median of the others'.
  ranks[1].doing = Activity::kComputing;
  ranks[1].cpu_share = 0.75;
  ranks[0].cpu_share = 0.99;
  ranks[2].cpu_share = 0.97;
  const auto w = judge_arrivals(ranks);
  ASSERT_TRUE(w && w->straggler);
  EXPECT_DOUBLE_EQ(w->cpu_share, 0.75);
  EXPECT_DOUBLE_EQ(w->others_cpu_share, 0.98);
  std::optional<NamedStraggler> none;
  EXPECT_NE(straggler_change_line(w, none).find(
                ": a straggler; it is off the CPU 25 % of its time outside collectives, the "
                "others 2 % (sleeping, loading data, or waiting for a lock or a CPU: not "
                "computing then); the others waited for it "),
            std::string::npos)
      << straggler_change_line(w, none);
}

}  // namespace
}  // namespace dtrain::report

namespace dtrain::report {
namespace {

TEST(ArrivalSkew, StatsSaysWhatTheArrivalsNameEvenWithoutStepRecords) {
  ArrivalVerdict v;
  v.straggler = true;
  v.rank = 1;
  v.host = "node2";
  v.last = 150;
  v.calls = 150;
  v.lag_seconds = 0.0103;
  v.lag_share = 0.204;
  v.waited_seconds = 0.052;
  v.others_waited_seconds = 2.1;
  RunStats stats;
  stats.arrivals = v;
  stats.arrival_ranks = 3;
  EXPECT_EQ(format_stats_table(stats),
            "no step records (the ranks ran without libdtrain's Meter)\n"
            "arrivals at the collectives (the last 150 of 3 ranks, matched by number):\n"
            "  rank 1 on node2 arrived last in 100 % of the last 150 collectives, 10.3 ms after "
            "the median: a straggler; the others waited for it 20.4 % of the time (it waited 52 "
            "ms in them, the median of the others 2.1 s)\n");
  stats.arrivals->straggler = false;
  EXPECT_EQ(arrival_section_text(*stats.arrivals, 3),
            "arrivals at the collectives (the last 150 of 3 ranks, matched by number): no "
            "straggler\n");
  const auto json = stats_to_json(stats);
  EXPECT_EQ(json["arrivals"]["rank"], 1);
  EXPECT_EQ(json["arrivals"]["straggler"], false);
  EXPECT_FALSE(stats_to_json(RunStats{}).contains("arrivals")) << "older runs' JSON unchanged";
}

}  // namespace
}  // namespace dtrain::report

namespace dtrain::report {
namespace {

// The live line comes once per change of verdict: named, named again (nothing), another rank,
// too few collectives (nothing), no longer.
TEST(ArrivalSkew, TheLiveLineComesOncePerChangeOfVerdict) {
  auto compute = ranks_of(3, 0.040);
  compute[1] = 0.050;
  const auto slow = judge_arrivals(simulate(compute, 200, 0.02));
  compute[1] = 0.040;
  compute[2] = 0.050;
  const auto other = judge_arrivals(simulate(compute, 200, 0.02));
  const auto clean = judge_arrivals(simulate(ranks_of(3, 0.040), 200, 0.05));
  ASSERT_TRUE(slow && slow->straggler && other && other->straggler && clean && !clean->straggler);
  std::optional<NamedStraggler> named;
  EXPECT_EQ(straggler_change_line(clean, named), "") << "nobody before, nobody now";
  EXPECT_EQ(straggler_change_line(slow, named),
            "dtrain: straggler: " + arrival_verdict_text(*slow));
  EXPECT_EQ(straggler_change_line(slow, named), "") << "the same rank again";
  EXPECT_EQ(straggler_change_line(std::nullopt, named), "") << "too few collectives";
  EXPECT_EQ(straggler_change_line(other, named),
            "dtrain: straggler: " + arrival_verdict_text(*other));
  EXPECT_EQ(straggler_change_line(clean, named),
            "dtrain: straggler: rank 2 on node0 no longer arrives last: the last collectives of "
            "every rank name no straggler");
  EXPECT_FALSE(named.has_value());
}

}  // namespace
}  // namespace dtrain::report
