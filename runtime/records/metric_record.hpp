// One line of a rank's metric records (rank-NNNNN.jsonl; schema in docs/metrics.md). The writer
// (libdtrain's Meter) and the reader (`dtrain stats`, `logs --hang`, `timeline`) sit side by side
// under one schema version, so a schema change is one diff that both sides' tests see.
// Version 1 has step records only; version 2 adds "type" and collective heartbeats, and (since
// 2026-11-28) resource samples and the rank's binding. Readers ignore fields they do not know and
// reject versions they do not. Pure: no clock, no files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "records/step_interval.hpp"

namespace dtrain::records {

enum class RecordType { kStep, kCollective, kResource, kBinding, kInterval };

// A resource record's GPU part: the rank's GPU as NVML reads it. Each reading is absent when NVML
// could not take it on this GPU (power is not supported on every board, utilization not on a MIG
// slice).
struct GpuSample {
  int index = 0;  // NVML's index (nvidia-smi's)
  std::optional<double> util_percent;
  std::optional<long long> memory_bytes;
  std::optional<double> power_watts;
  bool operator==(const GpuSample& other) const = default;
};

// A binding record's facts: what the rank had when its Meter opened the file, read from the
// process itself rather than from the plan (which a launcher, a user's taskset or a variable set by
// hand may have overridden).
struct RankBinding {
  std::string host;  // gethostname
  std::string cpus;  // the CPUs the rank's thread may run on, list form ("0-3,8")
  // CUDA_VISIBLE_DEVICES as the rank had it; absent when unset ("" is set and empty: no GPU).
  std::optional<std::string> gpus;
  // The NIC selections set in the rank's environment, by name (DTRAIN_NICS, NCCL_IB_HCA,
  // NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, UCX_NET_DEVICES): written in that order, read back in
  // the order of their names.
  std::vector<std::pair<std::string, std::string>> nics;
  bool operator==(const RankBinding& other) const = default;
};

struct MetricRecord {
  int version = 1;
  RecordType type = RecordType::kStep;
  double time = 0;  // Unix seconds when the record was made
  int rank = 0;
  // The job's attempt (DTRAIN_ATTEMPT, docs/fault-tolerance.md): written as "attempt" last, only
  // when above 0, so a restarted job's appended records can be told apart; absent reads as 0.
  int attempt = 0;
  // Step records.
  long long step = 0;
  long long samples = 0;
  double seconds = 0;
  std::optional<double> comm_seconds;  // v2: time in collectives since the previous step record
  std::optional<double> data_seconds;  // v2, when the training code reports it
  // Collective heartbeats (v2).
  long long seq = 0;  // collectives of this rank counted from 0
  std::string op;     // "allreduce", ...
  long long bytes = 0;
  bool enter = false;  // "phase": "enter" (true) or "exit"
  // An exit record's "failed": true: the collective raised an error (a timeout, a lost peer)
  // rather than completing.
  bool failed = false;
  // Resource samples (v2, since 2026-11-28): the process's use over the `interval` seconds before
  // `time`, taken by the Meter's background thread (docs/metrics.md).
  double interval = 0;
  double cpu_percent = 0;  // CPU time over wall time, 100 = one core busy
  long long rss_bytes = 0;
  std::optional<GpuSample> gpu;  // absent without NVML or without a GPU for the rank
  // Binding records (v2, since 2026-11-28): one when the Meter opens the file.
  RankBinding binding;
  // Interval records (v2, since 2026-12-06): the steps of one interval together; `time` is when
  // the interval closed.
  StepInterval step_interval;
  // Every field: what a reader's reused record must equal after a fresh line (the scan's tests).
  bool operator==(const MetricRecord& other) const = default;
};

// A malformed metric record: bad input (the CLI: exit 2).
class MetricFormatError : public InputError {
 public:
  using InputError::InputError;
};

// The version the writer writes and the newest the reader knows.
inline constexpr int kMetricSchemaVersion = 2;
// The largest CPU share a resource record may hold: 100 per core, and no machine has a million.
inline constexpr double kMaxCpuPercent = 1e8;
// A GPU board's power: no board draws a megawatt; a larger value is a damaged record.
inline constexpr double kMaxGpuWatts = 1e6;

// Writer side. A step record, version kMetricSchemaVersion, fields in the documented order;
// comm_seconds is written as 0 when unset, data_seconds only when set. Doubles are written as the
// shortest text that reads back as the same value.
std::string format_step_record(const MetricRecord& record);

// A collective heartbeat into `buffer` (256 bytes hold any), without a JSON object or an
// allocation: the Meter writes one per collective entry and exit, and it must stay far below 1 %
// of a step. `op` is a fixed identifier (no escaping). `failed` (exit records only) adds
// "failed":true. Returns the length, as snprintf does.
int format_collective_record(char* buffer, std::size_t size, double time, int rank,
                             std::uint64_t seq, const char* op, std::size_t bytes, bool enter,
                             bool failed = false, int attempt = 0) noexcept;

// A resource sample: v, type "resource", time, rank, interval, cpu_percent, rss_bytes, then (with
// a GPU) gpu and its readings that are present, then attempt when above 0. Written every few
// seconds, so through a JSON object like step records.
std::string format_resource_record(const MetricRecord& record);

// The rank's binding: v, type "binding", time, rank, host, cpus, then gpus when set, nics (an
// object, {} when none is set), then attempt when above 0. Once per Meter.
std::string format_binding_record(const MetricRecord& record);

// An interval record: v, type "interval", time, rank, first_step, last_step, count, began, then
// samples, seconds, comm_seconds and (when a step reported it) data_seconds, each a histogram
// object (LogHistogram::to_json), then attempt when above 0.
std::string format_interval_record(const MetricRecord& record);

// Reader side. Parses one JSON Lines record; `where` ("runs/a/rank-00001.jsonl:12") follows
// "dtrain: " in any error, which names the field and its range (records/record_fields.hpp):
// "v" 1 to kMetricSchemaVersion, "rank" 0 to INT_MAX, "attempt" 0 to kMaxAttempt, "time" Unix
// seconds 0 to kLatestRecordSeconds, "samples", "seq" and "bytes" 0 to INT64_MAX (2^64-1 is
// refused, not read as -1), "step" any int64, the durations 0 to kLatestRecordSeconds; of a
// resource record "interval" 0 to kLatestRecordSeconds, "cpu_percent" 0 to kMaxCpuPercent,
// "rss_bytes" and "gpu_memory_bytes" 0 to INT64_MAX, "gpu" 0 to INT_MAX, "gpu_util_percent" 0 to
// 100, "gpu_power_watts" 0 to kMaxGpuWatts; of an interval record "first_step" and "last_step" any
// int64 in that order, "began" a time, "count" 1 to INT64_MAX and the same as each histogram's
// but data_seconds' (at most it).
MetricRecord parse_metric_record(std::string_view line, const std::string& where);

// The fast path of parse_metric_record (metric_record_scan.cpp): a step or collective record in
// exactly the text format_step_record and format_collective_record write, read into `out` without a
// JSON document; true when `line` is one and within every range parse_metric_record checks, and
// `out` then equals what parse_metric_record returns, whatever it held before (a reader's reused
// record: its buffers are kept). False for any other line, leaving `out` partly written:
// parse_metric_record then reads the line afresh, and names what is wrong with it.
bool scan_metric_record(std::string_view line, MetricRecord& out);

}  // namespace dtrain::records
