// Collective benchmark in nccl-tests' conventions: '#' header lines (versions, parameters, one line
// per rank), then one row per size; columns size, count, time (µs), algbw, busbw (GB/s), #wrong.
// Every comparison is measured in this same run against raw MPI on the same buffers:
//
//   allreduce  float32 sum sweep 16 B .. 256 MiB, out of place: dtrain, MPI_Allreduce under the
//              malloc configuration the process started with (Debian's default unless the
//              environment sets MALLOC_MMAP_THRESHOLD_), then, after mallopt() raises the mmap
//              threshold as MALLOC_MMAP_THRESHOLD_ would, MPI_Allreduce "tuned".
//   fusion     three gradient sets: per-tensor MPI_Allreduce, one MPI_Allreduce of a pre-packed
//              buffer (the lower bound; no pack/unpack counted) and dtrain FusedAllreduce.
//   meter      a step of 161 per-tensor dtrain allreduces with and without a Meter recording
//              heartbeats and a step record: the recording overhead.
//
// --nodes (ranks on several nodes, issue 21) replaces all that with: the link between the first
// two nodes measured by MPI (one way, and both ways at once), then the allreduce sweep 4 KiB ..
// --max-bytes (default 64 MiB) with dtrain as the environment configures it (DTRAIN_ALGO unset:
// hierarchical where nodes hold several ranks; MPI or, with DTRAIN_BOOTSTRAP=tcp and torchrun's
// variables, the TCP backend), dtrain with DTRAIN_ALGO=flat (a
// second Context in this process), MPI_Allreduce tuned, and the link limit: a node must send
// 2 (N - 1) / N x S of an allreduce over N nodes (S on 2), so S takes at least that over the
// one-way rate. Then the same columns for reduce_scatter and allgather, S the whole buffer (every
// rank's block) 64 KiB .. --max-bytes, against MPI_Reduce_scatter_block and MPI_Allgather and a
// limit of (N - 1) / N x S (a node sends the other nodes' share of its data, receives its own).
// Then the ResNet-50 fusion set, one round. --mpi-thread LEVEL starts MPI at that
// thread level before libdtrain does (a diagnosis of Open MPI, docs/benchmarks.md).
//
//   mpirun -n 2 coll_bench [--json FILE] [--max-bytes N] [--skip-bert] [--sweep-only] [--nodes]
//                          [--mpi-thread single|funneled|serialized|multiple]
// Reports only; never fails on a timing. #wrong counts result elements that differ from the exact
// expected value (integer-valued data), and a non-zero total makes the exit status 1.
#include "bench_common.hpp"
#include "link_rate.hpp"
#include "nodes_sweep.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dtrain/bandwidth.hpp>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using namespace coll_bench;

constexpr int kFusionRounds = 5;
void allreduce_sweep(dtrain::Comm& comm, std::size_t max_bytes) {
  struct Row {
    std::size_t bytes;
    double dtrain_s, mpi_default_s, mpi_tuned_s;
    long long dtrain_wrong, mpi_wrong;
  };
  std::vector<Row> rows;
  for (std::size_t bytes = 16; bytes <= max_bytes; bytes *= 4) {
    const std::size_t n = bytes / sizeof(float);
    std::vector<float> in(n);
    std::vector<float> out(n);
    fill(in);
    Row r{bytes, 0, 0, 0, 0, 0};
    r.mpi_default_s = measure([&] {
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    r.mpi_wrong = wrong(out);
    std::fill(out.begin(), out.end(), -1.0f);
    r.dtrain_s = measure([&] {
      comm.allreduce(in.data(), out.data(), n, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
    });
    r.dtrain_wrong = wrong(out);
    rows.push_back(r);
  }
  // The tuned configuration, as MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_ set it: glibc keeps
  // Open MPI's per-call temporary buffers on the heap instead of mmapping each one afresh.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  for (Row& r : rows) {
    const std::size_t n = r.bytes / sizeof(float);
    std::vector<float> in(n);
    std::vector<float> out(n);
    fill(in);
    r.mpi_tuned_s = measure([&] {
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
  }
  if (rank != 0) return;
  const double bus = dtrain::allreduce_bus_factor(size);
  std::printf("#\n# allreduce float32 sum, out of place; time us, algbw/busbw GB/s\n");
  std::printf("#%11s %11s | %9s %7s %7s %6s | %9s %7s | %9s %7s | %8s %8s\n", "size", "count",
              "dtrain", "algbw", "busbw", "#wrong", "mpi-dflt", "busbw", "mpi-tuned", "busbw",
              "/dflt", "/tuned");
  auto& json = report["allreduce"] = nlohmann::json::array();
  for (const Row& r : rows) {
    const auto gb = [&](double s) { return static_cast<double>(r.bytes) / s / 1e9; };
    std::printf("%12zu %11zu | %9.1f %7.3f %7.3f %6lld | %9.1f %7.3f | %9.1f %7.3f | %8.2f %8.2f\n",
                r.bytes, r.bytes / 4, r.dtrain_s * 1e6, gb(r.dtrain_s), gb(r.dtrain_s) * bus,
                r.dtrain_wrong + r.mpi_wrong, r.mpi_default_s * 1e6, gb(r.mpi_default_s) * bus,
                r.mpi_tuned_s * 1e6, gb(r.mpi_tuned_s) * bus, r.mpi_default_s / r.dtrain_s,
                r.mpi_tuned_s / r.dtrain_s);
    json.push_back({{"bytes", r.bytes},
                    {"dtrain_us", r.dtrain_s * 1e6},
                    {"dtrain_busbw", gb(r.dtrain_s) * bus},
                    {"mpi_default_us", r.mpi_default_s * 1e6},
                    {"mpi_tuned_us", r.mpi_tuned_s * 1e6},
                    {"speedup_vs_default", r.mpi_default_s / r.dtrain_s},
                    {"speedup_vs_tuned", r.mpi_tuned_s / r.dtrain_s},
                    {"wrong", r.dtrain_wrong + r.mpi_wrong}});
    total_wrong += r.dtrain_wrong + r.mpi_wrong;
  }
  std::printf("# /dflt, /tuned: MPI time over dtrain time (above 1: dtrain faster)\n");
}

std::vector<std::size_t> bert_large_shapes() {
  // 391 tensors, 335 M elements: embeddings, 24 layers of 16 tensors, pooler.
  std::vector<std::size_t> s = {30522 * 1024, 512 * 1024, 2 * 1024, 1024, 1024};
  for (int l = 0; l < 24; ++l) {
    for (int q = 0; q < 4; ++q) {
      s.push_back(1024 * 1024);
      s.push_back(1024);
    }
    s.insert(s.end(), {1024, 1024, 4096 * 1024, 4096, 1024 * 4096, 1024, 1024, 1024});
  }
  s.insert(s.end(), {1024 * 1024, 1024});
  return s;
}

std::vector<std::size_t> many_small_shapes() {
  // 2,000 tensors of 4..64 KiB: the biases and norms of a deep transformer.
  std::vector<std::size_t> s;
  for (int i = 0; i < 2000; ++i) s.push_back(1024 * (1 + static_cast<std::size_t>(i % 16)));
  return s;
}

void fusion_set(dtrain::Comm& comm, const char* name, const std::vector<std::size_t>& shapes,
                int fusion_rounds = kFusionRounds) {
  std::vector<std::vector<float>> tensors;
  std::size_t total = 0;
  for (std::size_t n : shapes) {
    tensors.emplace_back(n);
    total += n;
  }
  std::vector<float> packed(total);
  std::vector<dtrain::FusedAllreduce::Tensor> refs;
  for (auto& t : tensors) refs.push_back({t.data(), t.size()});
  dtrain::FusedAllreduce fused(comm, refs, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);

  // The three variants take turns, round after round, and each reports the median of its rounds:
  // this VM's speed drifts by 2-5x over tens of seconds, and taking turns spreads the drift over
  // all three instead of charging it to whichever ran during a slow phase.
  const std::function<void()> variants[3] = {
      [&] {
        for (auto& t : tensors)
          MPI_Allreduce(MPI_IN_PLACE, t.data(), static_cast<int>(t.size()), MPI_FLOAT, MPI_SUM,
                        MPI_COMM_WORLD);
      },
      [&] {
        MPI_Allreduce(MPI_IN_PLACE, packed.data(), static_cast<int>(total), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      },
      [&] { fused.run(); }};
  std::vector<double> rounds[3];
  for (int round = 0; round < fusion_rounds; ++round) {
    for (int v = 0; v < 3; ++v) rounds[v].push_back(measure(variants[(v + round) % 3]));
  }
  // rounds[v] holds variant (v + round) % 3: regroup by variant.
  std::vector<double> by_variant[3];
  for (int round = 0; round < fusion_rounds; ++round) {
    for (int v = 0; v < 3; ++v) by_variant[(v + round) % 3].push_back(rounds[v][round]);
  }
  const auto median = [](std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  const double per_tensor = median(by_variant[0]);
  const double prepacked = median(by_variant[1]);
  const double dtrain_fused = median(by_variant[2]);
  // Exactness of one fused run on fresh integer-valued data.
  long long bad = 0;
  for (auto& t : tensors) fill(t);
  fused.run();
  for (auto& t : tensors) bad += wrong(t);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank != 0) return;
  const double best = std::min(per_tensor, prepacked);
  std::printf("%-12s %7zu %11zu | %10.2f %10.2f %10.2f | %9.3f %9.3f %6lld | %2zu x %zu MiB\n",
              name, shapes.size(), total, per_tensor * 1e3, prepacked * 1e3, dtrain_fused * 1e3,
              dtrain_fused / best, per_tensor / dtrain_fused, bad, fused.bucket_count(),
              fused.bucket_bytes() >> 20);
  report["fusion"].push_back({{"set", name},
                              {"tensors", shapes.size()},
                              {"elements", total},
                              {"per_tensor_ms", per_tensor * 1e3},
                              {"prepacked_ms", prepacked * 1e3},
                              {"dtrain_fused_ms", dtrain_fused * 1e3},
                              {"fused_over_best", dtrain_fused / best},
                              {"per_tensor_over_fused", per_tensor / dtrain_fused},
                              {"wrong", bad}});
  total_wrong += bad;
}

void meter_overhead(dtrain::Context& ctx) {
  // A step that is nothing but collectives (the worst case for per-collective recording): 161
  // per-tensor allreduces of the ResNet-50 set, two heartbeats each, plus one step record.
  std::vector<std::vector<float>> tensors;
  for (std::size_t n : resnet50_shapes()) tensors.emplace_back(n);
  dtrain::Comm& comm = ctx.comm();
  const auto step = [&] {
    for (auto& t : tensors)
      comm.allreduce(t.data(), t.data(), t.size(), dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
  };
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("coll_bench_meter_" + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(dir);
  double off = 0;
  double on = 0;
  for (int round = 0; round < 3; ++round) {  // interleaved: the VM's noise hits both alike
    off += measure(step);
    dtrain::Meter meter(ctx, dir);
    std::int64_t n = 0;
    on += measure([&] {
      step();
      meter.record(n++, 32, 0.01);
    });
  }
  std::filesystem::remove_all(dir);
  if (rank != 0) return;
  std::printf("#\n# meter: step = 161 dtrain allreduces (ResNet-50 set); ms per step\n");
  std::printf("# without meter %.3f ms, with meter %.3f ms: overhead %.2f %%\n", off / 3 * 1e3,
              on / 3 * 1e3, (on / off - 1) * 100);
  report["meter"] = {{"step_ms_without", off / 3 * 1e3},
                     {"step_ms_with", on / 3 * 1e3},
                     {"overhead_percent", (on / off - 1) * 100}};
}

// MPI for the baseline columns when libdtrain did not start it (the TCP bootstrap).
// With --mpi-thread LEVEL it starts MPI before libdtrain does (which then uses it as it is), so
// that the thread level's effect on Open MPI can be measured.
struct MpiForBaselines {
  bool started = false;
  explicit MpiForBaselines(int level = MPI_THREAD_SINGLE) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, level, &provided);
    started = true;
  }
  ~MpiForBaselines() {
    if (started) MPI_Finalize();
  }
  MpiForBaselines(const MpiForBaselines&) = delete;
  MpiForBaselines& operator=(const MpiForBaselines&) = delete;
};

// A second torchrun-style Context in this process needs its own rendezvous port.
void next_rendezvous_port() {
  const char* port = std::getenv("MASTER_PORT");
  if (port != nullptr) setenv("MASTER_PORT", std::to_string(std::atoi(port) + 1).c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  std::size_t max_bytes = std::size_t{256} << 20;
  bool bert = true;
  bool sweep_only = false;
  bool nodes = false;
  bool max_given = false;
  int mpi_thread = -1;  // --mpi-thread: MPI started here, at this level, before libdtrain
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a == "--max-bytes" && i + 1 < argc) {
      max_bytes = std::stoull(argv[++i]);
      max_given = true;
    } else if (a == "--skip-bert") {
      bert = false;
    } else if (a == "--mpi-thread" && i + 1 < argc) {
      const std::string level = argv[++i];
      mpi_thread = level == "single"       ? MPI_THREAD_SINGLE
                   : level == "funneled"   ? MPI_THREAD_FUNNELED
                   : level == "serialized" ? MPI_THREAD_SERIALIZED
                   : level == "multiple"   ? MPI_THREAD_MULTIPLE
                                           : -1;
      if (mpi_thread < 0) {
        std::fprintf(stderr,
                     "coll_bench: --mpi-thread: expected single, funneled, serialized or "
                     "multiple, got \"%s\"\n",
                     level.c_str());
        return 2;
      }
    } else if (a == "--sweep-only") {
      sweep_only = true;
    } else if (a == "--nodes") {
      nodes = true;
    } else {
      std::fprintf(stderr,
                   "coll_bench: unknown argument \"%s\"; expected --json FILE, "
                   "--max-bytes N, --skip-bert, --sweep-only, --nodes or --mpi-thread LEVEL\n",
                   a.c_str());
      return 2;
    }
  }
  // dtrain first: it initializes MPI (PMIx bootstrap under mpirun) and finalizes it at the end.
  // With DTRAIN_BOOTSTRAP=tcp (torchrun-style, the TCP backend) it leaves MPI alone, and the
  // baselines start it here.
  std::optional<MpiForBaselines> first;
  if (mpi_thread >= 0) first.emplace(mpi_thread);
  dtrain::Context ctx = dtrain::init();
  const MpiForBaselines mpi;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string mpi_version(lib, static_cast<std::size_t>(len));
  mpi_version = mpi_version.substr(0, mpi_version.find(','));
  const char* mmap_env = std::getenv("MALLOC_MMAP_THRESHOLD_");
  const std::vector<char> hosts = host_names();
  std::vector<int> pids(static_cast<std::size_t>(size));
  int pid = getpid();
  MPI_Gather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int level = 0;
    MPI_Query_thread(&level);
    std::printf("# dtrain coll_bench: libdtrain %s backend, bootstrap %s, %s, MPI_THREAD_%s\n",
                std::string(ctx.comm().backend()).c_str(), ctx.world().bootstrap.c_str(),
                mpi_version.c_str(),
                level == MPI_THREAD_SINGLE       ? "SINGLE"
                : level == MPI_THREAD_FUNNELED   ? "FUNNELED"
                : level == MPI_THREAD_SERIALIZED ? "SERIALIZED"
                                                 : "MULTIPLE");
    const char* shm_env = std::getenv("DTRAIN_SHM");
    std::printf(
        "# ranks %d, MALLOC_MMAP_THRESHOLD_ %s at start, DTRAIN_FUSION_BYTES %s, DTRAIN_SHM %s\n",
        size, mmap_env ? mmap_env : "unset (glibc default)",
        std::getenv("DTRAIN_FUSION_BYTES") ? std::getenv("DTRAIN_FUSION_BYTES") : "unset (64 MiB)",
        shm_env && *shm_env ? shm_env : "unset (shared memory when every rank is on one node)");
    for (int r = 0; r < size; ++r)
      std::printf("#  rank %2d pid %7d host %s device host memory\n", r,
                  pids[static_cast<std::size_t>(r)], &hosts[static_cast<std::size_t>(r) * 256]);
    report["mpi"] = mpi_version;
    report["ranks"] = size;
  }
  if (nodes) {
    // The flat path beside the configured one, in this process: a second Context.
    const char* configured = std::getenv("DTRAIN_ALGO");
    const std::string algo = configured && *configured ? configured : "unset (auto)";
    setenv("DTRAIN_ALGO", "flat", 1);
    if (ctx.world().bootstrap == "tcp") next_rendezvous_port();  // the first store still serves
    dtrain::Context flat = dtrain::init();
    if (rank == 0) {
      std::printf(
          "# DTRAIN_ALGO %s: allreduce %s; d-flat: DTRAIN_ALGO=flat; OMPI_MCA_btl_tcp_links "
          "%s\n",
          algo.c_str(), std::string(ctx.comm().allreduce_transport()).c_str(),
          std::getenv("OMPI_MCA_btl_tcp_links") ? std::getenv("OMPI_MCA_btl_tcp_links")
                                                : "unset (1)");
    }
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    nodes_sweep(ctx.comm(), flat.comm(), max_given ? max_bytes : std::size_t{64} << 20, hosts);
    if (rank == 0) {
      std::printf("#\n# fusion, float32 sum in place, tuned malloc, one round; ms per step\n");
      std::printf("#%-11s %7s %11s | %10s %10s %10s | %9s %9s %6s | %s\n", "set", "tensors",
                  "elements", "per-tensor", "pre-packed", "dtrain", "d/best", "pt/d", "#wrong",
                  "buckets");
      report["fusion"] = nlohmann::json::array();
    }
    fusion_set(ctx.comm(), "resnet50", resnet50_shapes(), 1);
    if (rank == 0) {
      std::printf("# Out of bounds values : %lld %s\n", total_wrong, total_wrong ? "ERROR" : "OK");
      if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << "\n";
    }
    return total_wrong == 0 ? 0 : 1;
  }
  allreduce_sweep(ctx.comm(), max_bytes);
  if (sweep_only) return total_wrong == 0 ? 0 : 1;
  if (rank == 0) {
    std::printf("#\n# fusion, float32 sum in place, tuned malloc; ms per step\n");
    std::printf("#%-11s %7s %11s | %10s %10s %10s | %9s %9s %6s | %s\n", "set", "tensors",
                "elements", "per-tensor", "pre-packed", "dtrain", "d/best", "pt/d", "#wrong",
                "buckets");
    report["fusion"] = nlohmann::json::array();
  }
  fusion_set(ctx.comm(), "resnet50", resnet50_shapes());
  if (bert) fusion_set(ctx.comm(), "bert-large", bert_large_shapes());
  fusion_set(ctx.comm(), "many-small", many_small_shapes());
  meter_overhead(ctx);
  if (rank == 0) {
    std::printf("# Out of bounds values : %lld %s\n", total_wrong, total_wrong ? "ERROR" : "OK");
    if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << "\n";
  }
  return total_wrong == 0 ? 0 : 1;
}
