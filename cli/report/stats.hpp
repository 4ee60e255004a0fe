// Throughput from the per-rank metric records (rank-NNNNN.jsonl) that libdtrain's Meter writes:
// per-rank samples/s and step time (p50, p95), the share of time spent waiting in dtrain's
// collectives and loading data, the job's total, and stragglers with their cause. Pure: the command
// reads the files and hands the records here, one at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "records/metric_record.hpp"
#include "report/arrival_skew.hpp"
#include "report/kept_steps.hpp"
#include "report/lost_time.hpp"
#include "report/stragglers.hpp"

namespace dtrain::report {

struct RankStats {
  int rank = 0;
  std::string host = "?";
  long long steps = 0;
  long long samples = 0;
  double seconds = 0;             // sum of step seconds
  double samples_per_second = 0;  // mean: samples / seconds
  // Percentiles of the steps' seconds (nearest rank): p95 is the slow tail. Percentiles of the
  // per-step rates put the fast steps at p95, the opposite of what a reader looks for there.
  // With interval records (records/step_interval.hpp) read from their histograms, within 0.5 %.
  double p50_step_seconds = 0;
  double p95_step_seconds = 0;
  bool has_comm = false;  // v2 records carry comm_seconds
  // Each step's comm_seconds, capped at its seconds: libdtrain until 2026-11-28 charged the
  // collectives run between steps to the next step, up to several times its length.
  double comm_seconds = 0;
  double comm_share = 0;  // comm_seconds / seconds, 0 to 1
  bool has_data = false;  // some step reported data_seconds
  double data_seconds = 0;
  double data_share = 0;
};

// A rank's resource samples (records of "type":"resource", every attempt's) averaged: the CPU share
// weighted by each sample's interval (the CPU time over the time sampled), the others the mean of
// their readings. GPU figures only from the samples that hold them.
struct RankResources {
  int rank = 0;
  std::string host = "?";
  long long records = 0;  // resource records averaged
  double cpu_percent = 0;
  double rss_bytes = 0;
  std::optional<int> gpu;  // NVML's index, of the last sample with a GPU
  std::optional<double> gpu_util_percent;
  std::optional<double> gpu_memory_bytes;
  std::optional<double> gpu_power_watts;
};

// The ranks of one host together: a node moves at the pace of its slowest rank.
struct NodeStats {
  std::string host;
  std::vector<int> ranks;
  long long samples = 0;
  double slowest_rank_seconds = 0;
  double samples_per_second = 0;  // samples / slowest_rank_seconds
};

struct RunStats {
  std::vector<RankStats> ranks;  // by rank
  // By host name, when the ranks ran on two or more known hosts; empty otherwise.
  std::vector<NodeStats> nodes;
  long long total_samples = 0;
  // The job moves at the pace of its slowest rank: total samples over the longest rank time.
  double slowest_rank_seconds = 0;
  double total_samples_per_second = 0;
  double straggler_threshold = kDefaultStragglerThreshold;
  std::vector<Straggler> stragglers;  // ranks, then nodes, slowest first (stragglers.hpp)
  // From the collectives' waits (arrival_skew.hpp; RUN_DIR/arrivals/), Meter or not:
  // the rank that arrived last most often and whether it is a straggler; nullopt when fewer than
  // two ranks' waits, or too few collectives in common, were there.
  std::optional<ArrivalVerdict> arrivals;
  std::size_t arrival_ranks = 0;  // the ranks whose waits were compared
  // A job that restarted (records with "attempt"): when each attempt began its first step
  // (microseconds), for the lost time, which the command fills in from the attempt records.
  std::map<int, std::int64_t> first_step_start;
  LostTime lost;  // lost.redone_step_records is set here
  // What comm % cannot show, one line each (printed under the table, `notes` in --json): the
  // Meter sees only dtrain's own collectives, so another library's count as compute; and an
  // attempt that numbered its steps from the start again.
  std::vector<std::string> notes;
  // By rank, for every rank with resource samples (a rank may have them without a step record).
  std::vector<RankResources> resources;
};

// The sums of a rank's resource samples, for the averages (RankResources).
struct ResourceSums {
  long long records = 0;
  double cpu_seconds = 0;  // cpu_percent / 100 x interval
  double interval = 0;
  double cpu_percent = 0;  // for samples without an interval
  double rss_bytes = 0;
  std::optional<int> gpu;
  long long util_n = 0, memory_n = 0, power_n = 0;
  double util = 0, memory = 0, power = 0;
};

// Adds step, interval and resource records one at a time (collective heartbeats are ignored here),
// so a run's records never have to be in memory together; of a rank's steps only what RankSteps
// (kept_steps.hpp) keeps, bounded whatever the run's length: the last steps' numbers, the older
// ones' sums and step-time histogram in a few blocks, for the percentiles and for restarts: a
// rank's record of a later attempt for step s drops that rank's records of earlier attempts for
// steps >= s (an interval or a block: its first step >= s; one that began before s stays whole),
// the work the crash lost, redone from the checkpoint, so each step is counted once, from the
// attempt that completed it.
class StatsBuilder {
 public:
  void add(const records::MetricRecord& record);
  void set_host(int rank, std::string host);
  RunStats finish(double straggler_threshold = kDefaultStragglerThreshold) const;

 private:
  struct Acc {
    int rank = 0;
    int attempt = 0;  // of the last record added
    RankSteps steps;
  };
  std::map<int, Acc> ranks_;
  // Sums of a rank's resource samples, for the averages.
  using ResourceAcc = ResourceSums;
  std::map<int, ResourceAcc> resources_;
  std::map<int, std::int64_t> first_step_start_;
  long long redone_ = 0;
  // Attempts whose first step on some rank was no later than that rank's first step before: the
  // job started over, or the attempt numbered its steps from 0 again after resuming.
  std::map<int, long long> renumbered_;  // attempt -> its first step
  std::map<int, std::string> hosts_;
};

RunStats compute_stats(const std::vector<records::MetricRecord>& records,
                       double straggler_threshold = kDefaultStragglerThreshold);

// Nearest-rank percentile (p in 0..100) of unsorted values; 0 for none.
double percentile(std::vector<double> values, double p);

std::string format_stats_table(const RunStats& stats);
// The resource table that format_stats_table() ends with ("" without resource samples): per rank
// its samples, cpu %, rss MiB and, when any rank has a GPU, gpu, gpu %, gpu MiB and gpu W ("-"
// for a reading a rank lacks).
std::string format_resources(const std::vector<RankResources>& resources);
nlohmann::json stats_to_json(const RunStats& stats);

}  // namespace dtrain::report
