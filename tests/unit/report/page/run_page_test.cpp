// The report page's model from synthetic run data: the job, every rank, the culprit of a failed
// run, resources when sampled and "not recorded" when not, the scaling study grouped by job; and
// the page of 1,024 ranks under 2 MiB (what the page itself holds: report_html_test.cpp).
#include "report/page/run_page.hpp"
#include "report/page/report_page.hpp"
#include "report/page/stuck_collective.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "heartbeats.hpp"
#include "rank_logs.hpp"
#include "report/page/report_html.hpp"

namespace dtrain::report {
namespace {

using testing::at;
using testing::exit_line;
using testing::scan;
using testing::start;

constexpr double kT0 = 1795341600.0;

records::MetricRecord step(int rank, int n, double seconds, long long samples) {
  records::MetricRecord r;
  r.version = 2;
  r.rank = rank;
  r.step = n;
  r.time = kT0 + n * seconds;
  r.seconds = seconds;
  r.samples = samples;
  r.comm_seconds = seconds / 4;
  return r;
}

// A 4-rank run in which rank 2 was killed after 5 steps; the others failed after it.
RunPageInput failed_run(bool with_resources) {
  RunPageInput in;
  in.summary.label = "killed-42";
  in.run_dir = "runs/killed-42";
  in.summary.job = "killed";
  in.summary.id = "42";
  in.summary.site = "local";
  in.summary.nodes = 1;
  in.summary.ranks_per_node = 4;
  in.summary.world_size = 4;
  StatsBuilder stats;
  SeriesBuilder series;
  for (int rank = 0; rank < 4; ++rank) {
    stats.set_host(rank, "node0");
    series.set_host(rank, "node0");
    for (int n = 1; n <= (rank == 2 ? 5 : 6); ++n) {
      stats.add(step(rank, n, 1.0, 32));
      series.add(step(rank, n, 1.0, 32));
    }
    if (with_resources) {
      records::MetricRecord r;
      r.version = 2;
      r.type = records::RecordType::kResource;
      r.rank = rank;
      r.time = kT0 + 3;
      r.interval = 1;
      r.cpu_percent = 97.5;
      r.rss_bytes = 123456789;
      series.add(r);
      stats.add(r);  // the ranks table shows the averages `dtrain stats` computes
    }
  }
  in.stats = stats.finish();
  in.series = series.finish();
  std::vector<RankLogScan> scans;
  for (int rank = 0; rank < 4; ++rank) {
    const std::vector<std::string> lines =
        rank == 2 ? std::vector<std::string>{at(0, start(2)), at(5, "rank 2 about to die"),
                                             at(5.1, exit_line(2, 0, 9))}
                  : std::vector<std::string>{at(0, start(rank)), at(6, "step 6"),
                                             at(7, "peer closed the connection"),
                                             at(7.2, exit_line(rank, 1))};
    scans.push_back(scan(rank, lines));
    RankPlace p;
    p.start = scans.back().start();
    p.first_line = testing::kT0;
    p.last_line = testing::kT0 + 7'200'000;
    in.places[rank] = p;
  }
  in.first_error = find_first_error(scans, {}, std::nullopt);
  in.checkpoints.push_back({{"2026-11-22T10:00:03.000000Z", 3, "/ck/ckpt-3", 4}, 4096});
  return in;
}

TEST(RunPage, AFailedRunNamesItsCulpritInTheJobTheRanksAndTheFailures) {
  const auto j = run_page_json(failed_run(false));
  EXPECT_EQ(j["job"]["name"], "killed");
  EXPECT_EQ(j["job"]["state"], "failed");
  EXPECT_EQ(j["job"]["exit"], "rank 2 was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(j["job"]["ranks"], "4");
  EXPECT_EQ(j["job"]["wall"], "7.2 s");
  EXPECT_EQ(j["job"]["hosts"], nlohmann::json({"node0"}));
  const auto& culprit = j["failures"]["culprit"];
  EXPECT_EQ(culprit["rank"], 2);
  EXPECT_EQ(culprit["host"], "node0");
  EXPECT_EQ(culprit["last_line"], at(5, "rank 2 about to die"));
  EXPECT_EQ(j["failures"]["victim_count"], 3);
  // The three ended alike (status 1, the same line): one row, their ranks collapsed.
  ASSERT_EQ(j["failures"]["victims"].size(), 1u);
  EXPECT_EQ(j["failures"]["victims"][0]["rank"], "ranks 0-1,3");
  EXPECT_EQ(j["failures"]["victims"][0]["host"], "node0");
  EXPECT_EQ(j["failures"]["victims"][0]["line"], "peer closed the connection");
  EXPECT_EQ(j["failures"]["victims_listed"], 3);
  EXPECT_EQ(j["failures"]["summary"], "rank 2 on node0 was killed by signal 9 (SIGKILL)");
  const auto& rows = j["ranks"]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  const auto columns = j["ranks"]["columns"];
  EXPECT_EQ(columns.back(), "end");
  EXPECT_EQ(rows[2].back(), "culprit: was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(rows[0].back(), "victim: exited with status 1");
  EXPECT_EQ(rows[2][3], "5");     // steps
  EXPECT_EQ(rows[0][4], "32");    // samples/s
  EXPECT_EQ(rows[0][7], "25 %");  // comm %
  EXPECT_EQ(j["checkpoints"][0]["size"], "4 KiB");
  EXPECT_EQ(j["checkpoints"][0]["step"], 3);
  EXPECT_EQ(j["checkpoints"][0]["took"], "not recorded");   // a record of an older dtrain
  EXPECT_EQ(j["throughput"]["samples_per_second"], "123");  // 736 samples over 6 s
  EXPECT_EQ(j["ranks"]["bindings"], false);
}

records::MetricRecord binding(int rank, int attempt, const std::string& cpus) {
  records::MetricRecord r;
  r.version = 2;
  r.type = records::RecordType::kBinding;
  r.rank = rank;
  r.attempt = attempt;
  r.time = kT0;
  r.binding.host = "node0";
  r.binding.cpus = cpus;
  return r;
}

TEST(RunPage, EachRanksCoresGpusAndNicsComeFromItsLatestBindingRecord) {
  RunPageInput in = failed_run(false);
  keep_binding(in.bindings, binding(0, 1, "0-3"));
  keep_binding(in.bindings, binding(0, 0, "4-7"));  // an earlier attempt's, read later: ignored
  records::MetricRecord r1 = binding(1, 0, "4-7,12");
  r1.binding.gpus = "1";
  r1.binding.nics = {{"DTRAIN_NICS", "mlx5_1"}, {"NCCL_IB_HCA", "=mlx5_1"}};
  keep_binding(in.bindings, r1);
  records::MetricRecord none = binding(2, 0, "8");
  none.binding.gpus = "";
  keep_binding(in.bindings, none);
  keep_binding(in.bindings, step(3, 1, 1.0, 32));  // not a binding record
  const auto j = run_page_json(in);
  const auto& columns = j["ranks"]["columns"];
  ASSERT_GE(columns.size(), 6u);
  EXPECT_EQ(columns[3], "cores");
  EXPECT_EQ(columns[4], "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(columns[5], "NIC");
  const auto& rows = j["ranks"]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0][3], "0-3");
  EXPECT_EQ(rows[0][4], "-");  // CUDA_VISIBLE_DEVICES unset
  EXPECT_EQ(rows[0][5], "-");
  EXPECT_EQ(rows[1][3], "4-7,12");
  EXPECT_EQ(rows[1][4], "1");
  EXPECT_EQ(rows[1][5], "DTRAIN_NICS=mlx5_1, NCCL_IB_HCA==mlx5_1");
  EXPECT_EQ(rows[2][4], "none");  // set and empty: no GPU visible
  EXPECT_EQ(rows[3][3], "-");     // no binding record
  EXPECT_EQ(rows[3][6], "6");     // the steps column follows
  EXPECT_EQ(j["ranks"]["bindings"], true);
}

TEST(RunPage, ACheckpointShowsHowLongItsSaveTookAndTheRecordedSize) {
  RunPageInput in = failed_run(false);
  records::CheckpointRecord c{"2026-11-22T10:00:05.000000Z", 5, "/ck/ckpt-5", 4};
  c.seconds = 1.25;
  c.bytes = 3 << 20;
  in.checkpoints.push_back({c, std::nullopt});  // pruned since: the record still has its size
  const auto j = run_page_json(in);
  ASSERT_EQ(j["checkpoints"].size(), 2u);
  EXPECT_EQ(j["checkpoints"][1]["took"], "1.25 s");
  EXPECT_EQ(j["checkpoints"][1]["size"], "3 MiB");
  EXPECT_EQ(j["checkpoints"][1]["since_previous"], "2 s");
}

TEST(RunPage, ResourcesAreChartedWhenSampledAndAbsentWhenNot) {
  const auto without = run_page_json(failed_run(false));
  EXPECT_TRUE(without["series"]["resources"].is_null());
  EXPECT_EQ(without["ranks"]["columns"].size(), 10u);
  const auto with = run_page_json(failed_run(true));
  const auto& res = with["series"]["resources"];
  ASSERT_TRUE(res.is_object());
  EXPECT_EQ(res["gpu"], false);
  EXPECT_FALSE(res.contains("gpu_power_watts"));
  // A step a second for 6 s: 6 bins. One sample per rank, over 2 to 3 s: bin 2; the rest null.
  const auto& median = res["cpu_percent"]["median"];
  ASSERT_EQ(median.size(), 6u);
  EXPECT_EQ(median[2], 97.5);
  EXPECT_TRUE(median[1].is_null());
  const auto& columns = with["ranks"]["columns"];
  EXPECT_EQ(columns[9], "CPU %");
  EXPECT_EQ(columns[10], "RSS");
  EXPECT_EQ(with["ranks"]["rows"][1][9], "97.5");
  EXPECT_EQ(with["ranks"]["rows"][1][10], "118 MiB");
}

TEST(RunPage, ABatchJobWhoseRanksHaveNotStartedIsQueued) {
  RunPageInput in;
  in.summary.label = "big-7";
  in.summary.job = "big";
  in.summary.world_size = 1024;
  const auto j = run_page_json(in);
  EXPECT_EQ(j["job"]["state"], "queued");
  EXPECT_EQ(j["job"]["ranks"], "1024");
  EXPECT_TRUE(j["ranks"]["rows"].empty());
}

TEST(RunPage, ARunWithoutMetricsStillHasItsJobAndRanks) {
  RunPageInput in = failed_run(false);
  in.stats.reset();
  in.series = RunSeries{};
  const auto j = run_page_json(in);
  EXPECT_TRUE(j["throughput"].is_null());
  EXPECT_TRUE(j["series"].is_null());
  EXPECT_EQ(j["ranks"]["rows"].size(), 4u);
  EXPECT_EQ(j["ranks"]["rows"][1][3], "-");
  EXPECT_EQ(j["failures"]["culprit"]["rank"], 2);
}

// A 4-rank job still running, hung: ranks 0, 1 and 3 (node0, node0, node1) have waited in
// allreduce #5 since 0.5 s; rank 2 (node1) left #4 at 0.41 s and never entered #5. No rank has an
// exit line, no attempt or job-end record says it ended; the page is written at 95 s.
RunPageInput hung_run() {
  RunPageInput in;
  in.summary.label = "hung-9";
  in.summary.job = "hung";
  in.summary.world_size = 4;
  HeartbeatTracker tracker;
  std::vector<RankLogScan> scans;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string host = rank < 2 ? "node0" : "node1";
    tracker.add_rank(rank, host);
    for (int seq = 0; seq < (rank == 2 ? 5 : 6); ++seq) {
      tracker.add(testing::coll(rank, seq, true, 0.1 * seq));
      if (seq < 5) tracker.add(testing::coll(rank, seq, false, 0.1 * seq + 0.01));
    }
    scans.push_back(scan(rank, {at(0, start(rank, 4, host)), at(0.2, "step 2")}));
    RankPlace p;
    p.start = scans.back().start();
    p.first_line = testing::kT0;
    p.last_line = testing::kT0 + 200'000;
    in.places[rank] = p;
  }
  in.hang = detect_hang(tracker);
  in.first_error = find_first_error(scans, {}, missed_collective(*in.hang));
  in.now = testing::kT0 + 95'000'000;
  return in;
}

TEST(RunPage, AHungJobThatStillRunsListsTheCollectiveItIsStuckInFirst) {
  const auto j = run_page_json(hung_run());
  ASSERT_EQ(j["job"]["state"], "running");
  const auto& now = j["in_progress"];
  ASSERT_TRUE(now.is_object()) << j.dump();
  EXPECT_EQ(now["collective"], "#5 allreduce of 4 KiB");
  EXPECT_EQ(now["at"], "2026-11-22T10:00:00.500000Z");
  EXPECT_EQ(now["waited"], "1 min 34 s");  // 0.5 s to 95 s
  EXPECT_EQ(now["in"], "ranks 0-1,3");
  EXPECT_EQ(now["missing"], "rank 2");
  EXPECT_EQ(now["text"],
            "#5 allreduce of 4 KiB: in progress since 2026-11-22T10:00:00.500000Z (1 min 34 s "
            "before this page was written): ranks 0-1,3 are in it; rank 2 (on node1) has not "
            "entered it (it left #4 at 2026-11-22T10:00:00.410000Z).");
  EXPECT_EQ(now["row"], nlohmann::json({"#5 allreduce of 4 KiB (in progress)",
                                        "2026-11-22T10:00:00.500000Z", "in progress for 1 min 34 s",
                                        "1 min 34 s so far", "not yet: rank 2", "3 of 4 in"}));
}

TEST(RunPage, EveryRankInACollectiveNoneHasLeftIsInProgressWithNobodyMissing) {
  HeartbeatTracker tracker;
  for (int rank = 0; rank < 2; ++rank) {
    tracker.add_rank(rank, "node0");
    tracker.add(testing::coll(rank, 0, true, 1.0 + rank));
  }
  const auto now = in_progress_json(detect_hang(tracker), testing::kT0 + 11'000'000);
  EXPECT_EQ(now["in"], "ranks 0-1");
  EXPECT_EQ(now["missing"], "none");
  EXPECT_EQ(now["waited"], "10 s");
  EXPECT_EQ(now["text"],
            "#0 allreduce of 4 KiB: in progress since 2026-11-22T10:00:01.000000Z (10 s before "
            "this page was written): ranks 0-1 are in it; every rank entered it and none has "
            "left it.");
  // Between collectives (every rank left the last it entered) nothing is in progress.
  for (int rank = 0; rank < 2; ++rank) tracker.add(testing::coll(rank, 0, false, 3.0));
  EXPECT_TRUE(in_progress_json(detect_hang(tracker), std::nullopt).is_null());
}

TEST(RunPage, ARunningJobReadsAsRunningForSoLongNeverAsEnded) {
  const auto j = run_page_json(hung_run());
  EXPECT_EQ(j["job"]["state"], "running");
  EXPECT_EQ(j["job"]["wall"], "1 min 35 s so far");  // first line to the page's writing
  EXPECT_EQ(j["job"]["end"], "-");
  EXPECT_EQ(j["job"]["last_line"], "2026-11-22T10:00:00.200000Z");
  EXPECT_EQ(j["job"]["exit"], "none yet (running)");
  // The timeline's bar of the attempt still running: to the page's writing.
  const auto& current = j["failures"]["current"];
  EXPECT_EQ(current["attempt"], 0);
  EXPECT_EQ(current["t0"], 1795341600.0);
  EXPECT_EQ(current["t1"], 1795341695.0);
  // A restarted job's running attempt begins where the last recorded one ended.
  RunPageInput again = hung_run();
  again.attempts.push_back({0,
                            "2026-11-22T09:00:00.000000Z",
                            "2026-11-22T09:59:00.000000Z",
                            1,
                            "restarted",
                            "rank 1 failed",
                            4,
                            {},
                            0});
  EXPECT_EQ(run_page_json(again)["failures"]["current"]["attempt"], 1);
  EXPECT_EQ(run_page_json(again)["failures"]["current"]["t0"], 1795341540.0);
  // Once it ended (a job-end record), the same ranks read as ended, with no bar running.
  RunPageInput ended = hung_run();
  ended.job_end = records::JobEndRecord{};
  const auto e = run_page_json(ended);
  EXPECT_NE(e["job"]["state"], "running");
  EXPECT_EQ(e["job"]["end"], "2026-11-22T10:00:00.200000Z");
  EXPECT_EQ(e["job"]["wall"], "200 ms");
  EXPECT_FALSE(e.contains("in_progress"));
  EXPECT_FALSE(e["failures"].contains("current"));
}

ScalingRun run(const std::string& label, const std::string& job, int ranks, double sps) {
  ScalingRun r;
  r.label = label;
  r.job = job;
  r.ranks = ranks;
  r.samples_per_second = sps;
  return r;
}

TEST(RunPage, TheScalingStudyGroupsRunsByJobAndComparesWithTheSmallest) {
  const auto groups =
      scaling_groups({run("fm-2", "fashion-mnist", 2, 1800), run("pi-1", "pi", 1, 5),
                      run("fm-1", "fashion-mnist", 1, 1000), run("fm-x", "fashion-mnist", 4, 0)});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].job, "fashion-mnist");
  ASSERT_TRUE(groups[0].table);
  EXPECT_EQ(groups[0].left_out, std::vector<std::string>{"fm-x"});
  EXPECT_FALSE(groups[1].table);  // one run of pi: nothing to compare
  const auto page =
      report_json({nlohmann::json{{"label", "fm-2"}}, nlohmann::json{{"label", "fm-1"}}}, groups,
                  "2026-11-28T10:00:00Z");
  ASSERT_EQ(page["scaling"].size(), 1u);
  const auto& rows = page["scaling"][0]["rows"];
  EXPECT_EQ(rows[0]["run"], "fm-1");
  EXPECT_EQ(rows[1]["run"], "fm-2");
  EXPECT_EQ(rows[1]["efficiency_text"], "90 %");
  EXPECT_EQ(rows[1]["speedup_text"], "1.8 x");
  EXPECT_EQ(page["runs"][1]["id"], "run-1");
}

// 1,024 ranks on 128 nodes, 500 steps each with resource samples: the page stays under 2 MiB.
TEST(ReportHtml, APageOf1024RanksStaysUnder2MiB) {
  RunPageInput in;
  in.summary.label = "big";
  StatsBuilder stats;
  SeriesBuilder series;
  for (int rank = 0; rank < 1024; ++rank) {
    const std::string host = "node" + std::to_string(rank / 8);
    stats.set_host(rank, host);
    series.set_host(rank, host);
    for (int n = 1; n <= 500; ++n) {
      const auto r = step(rank, n, 0.1 + (rank % 7) * 0.001, 64);
      stats.add(r);
      series.add(r);
      if (n % 10 == 0) {
        records::MetricRecord s;
        s.version = 2;
        s.type = records::RecordType::kResource;
        s.rank = rank;
        s.time = r.time;
        s.interval = 1;
        s.cpu_percent = 90 + rank % 10;
        s.rss_bytes = 1LL << 30;
        s.gpu = records::GpuSample{rank % 8, 80.0, 40LL << 30, 300.0};
        series.add(s);
      }
    }
    RankPlace p;
    p.start = records::RankStart{rank, 1024, host, rank % 8, 8, 1000 + rank, "train", 0};
    in.places[rank] = p;
  }
  in.stats = stats.finish();
  in.series = series.finish();
  const auto model = report_json({run_page_json(in)}, {}, "now");
  EXPECT_EQ(model["runs"][0]["ranks"]["rows"].size(), 1024u);
  const std::string html = report_html(model, "big");
  EXPECT_LT(html.size(), 2u << 20) << "the page of 1,024 ranks is " << html.size() << " bytes";
}

}  // namespace
}  // namespace dtrain::report
