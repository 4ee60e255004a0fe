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
// one-way rate. Then the ResNet-50 fusion set, one round. --mpi-thread LEVEL starts MPI at that
// thread level before libdtrain does (a diagnosis of Open MPI, docs/benchmarks.md).
//
//   mpirun -n 2 coll_bench [--json FILE] [--max-bytes N] [--skip-bert] [--sweep-only] [--nodes]
//                          [--mpi-thread single|funneled|serialized|multiple]
// Reports only; never fails on a timing. #wrong counts result elements that differ from the exact
// expected value (integer-valued data), and a non-zero total makes the exit status 1.
#define OMPI_SKIP_MPICXX 1
#include <malloc.h>
#include <mpi.h>
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

int rank = 0;
int size = 1;
constexpr int kFusionRounds = 5;
long long total_wrong = 0;
nlohmann::ordered_json report = {{"benchmark", "dtrain coll_bench"}};

// Median over `batches` of the per-op time of `reps` back-to-back calls, max over ranks (s).
double time_op(const std::function<void()>& op, int reps, int batches) {
  op();  // warm-up: first touch, connection setup
  std::vector<double> t;
  for (int b = 0; b < batches; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < reps; ++i) op();
    double mine = (MPI_Wtime() - start) / reps;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t.push_back(slowest);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Enough repetitions for a batch of ~50 ms, at least 1.
int reps_for(double seconds_per_op) {
  return std::max(1, static_cast<int>(0.05 / std::max(seconds_per_op, 1e-7)));
}

double measure(const std::function<void()>& op) {
  const double start = MPI_Wtime();
  op();
  double one = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return time_op(op, reps_for(one), 5);
}

void fill(std::vector<float>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i % 64) * (rank + 1));
}

long long wrong(const std::vector<float>& v) {
  const float tri = static_cast<float>(size * (size + 1) / 2);
  long long n = 0;
  for (std::size_t i = 0; i < v.size(); ++i) n += v[i] != static_cast<float>(i % 64) * tri;
  return n;
}

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

// The lowest rank on another host than rank 0's, -1 when every rank is on rank 0's; and the
// number of hosts.
std::pair<int, int> other_node(const std::vector<char>& hosts) {
  int other = -1;
  std::vector<std::string> seen;
  for (int r = 0; r < size; ++r) {
    const std::string h(&hosts[static_cast<std::size_t>(r) * 256]);
    if (other < 0 && h != std::string(&hosts[0])) other = r;
    if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
  }
  return {other, static_cast<int>(seen.size())};
}

// GB/s from rank 0 to `peer` (one way) and each way while both send (MPI_Sendrecv), 64 MiB in
// 4 MiB messages, median of 3; every rank returns rank 0's figures.
std::pair<double, double> link_rates(int peer) {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  constexpr std::size_t kMessage = std::size_t{4} << 20;
  std::vector<char> out(kBytes, 1);
  std::vector<char> in(kBytes);
  const bool mine = rank == 0 || rank == peer;
  const int other = rank == 0 ? peer : 0;
  const auto run = [&](bool both) {
    std::vector<double> t;
    for (int i = 0; i < 4; ++i) {  // the first is a warm-up
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      if (mine) {
        for (std::size_t d = 0; d < kBytes; d += kMessage) {
          const int n = static_cast<int>(kMessage);
          if (both) {
            MPI_Sendrecv(out.data() + d, n, MPI_BYTE, other, 1, in.data() + d, n, MPI_BYTE, other,
                         1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else if (rank == 0) {
            MPI_Send(out.data() + d, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          } else {
            MPI_Recv(in.data() + d, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          }
        }
        // One way: done when the receiver has it all.
        if (!both && rank == peer) MPI_Send(in.data(), 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        if (!both && rank == 0)
          MPI_Recv(in.data(), 1, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (i > 0) t.push_back(MPI_Wtime() - start);
    }
    std::sort(t.begin(), t.end());
    double rate = static_cast<double>(kBytes) / t[1] / 1e9;
    MPI_Bcast(&rate, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return rate;
  };
  const double one_way = run(false);
  return {one_way, run(true)};
}

void nodes_sweep(dtrain::Comm& comm, dtrain::Comm& flat, std::size_t max_bytes,
                 const std::vector<char>& hosts) {
  const auto [peer, nodes] = other_node(hosts);
  double one_way = 0;
  double both = 0;
  if (peer > 0) std::tie(one_way, both) = link_rates(peer);
  // A node sends at least 2 (N - 1) / N of the message (the bandwidth-optimal lower bound).
  const double node_share = nodes > 1 ? 2.0 * (nodes - 1) / nodes : 0;
  const double bus = dtrain::allreduce_bus_factor(size);
  if (rank == 0) {
    std::printf(
        "# link rank 0 -> rank %d (MPI, 64 MiB): one-way %.4f GB/s, both ways at once %.4f "
        "GB/s each (%.2f x one-way)\n",
        peer, one_way, both, one_way > 0 ? both / one_way : 0);
    std::printf("# limit = %.2f x S / one-way rate (%d nodes); lim/d = limit / dtrain time\n",
                node_share, nodes);
    std::printf("# allreduce float32 sum, out of place, tuned malloc; time us, busbw GB/s\n");
    std::printf("#%11s | %9s %7s | %9s %7s | %9s %7s | %9s %6s | %7s %7s %6s\n", "size", "dtrain",
                "busbw", "d-flat", "busbw", "mpi-tuned", "busbw", "limit", "lim/d", "mpi/d",
                "flat/d", "#wrong");
    report["nodes"] = {{"nodes", nodes},
                       {"one_way_GBps", one_way},
                       {"both_ways_GBps", both},
                       {"transport", std::string(comm.allreduce_transport())},
                       {"sweep", nlohmann::json::array()}};
  }
  for (std::size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
    const std::size_t n = bytes / sizeof(float);
    std::vector<float> in(n);
    std::vector<float> out(n);
    fill(in);
    const auto dtrain_with = [&](dtrain::Comm& c) {
      std::fill(out.begin(), out.end(), -1.0f);
      const double t = measure([&] {
        c.allreduce(in.data(), out.data(), n, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
      });
      return std::pair<double, long long>(t, wrong(out));
    };
    const auto [d, d_wrong] = dtrain_with(comm);
    const auto [f, f_wrong] = dtrain_with(flat);
    const double m = measure([&] {
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    long long bad = d_wrong + f_wrong + wrong(out);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    total_wrong += rank == 0 ? bad : 0;
    if (rank != 0) continue;
    const double limit = one_way > 0 ? node_share * static_cast<double>(bytes) / one_way / 1e9 : 0;
    const auto bw = [&](double t) { return static_cast<double>(bytes) / t / 1e9 * bus; };
    std::printf(
        "%12zu | %9.1f %7.4f | %9.1f %7.4f | %9.1f %7.4f | %9.1f %6.2f | %7.2f %7.2f %6lld\n",
        bytes, d * 1e6, bw(d), f * 1e6, bw(f), m * 1e6, bw(m), limit * 1e6, limit / d, m / d, f / d,
        bad);
    std::fflush(stdout);
    report["nodes"]["sweep"].push_back({{"bytes", bytes},
                                        {"dtrain_us", d * 1e6},
                                        {"dtrain_flat_us", f * 1e6},
                                        {"mpi_tuned_us", m * 1e6},
                                        {"limit_us", limit * 1e6},
                                        {"wrong", bad}});
  }
  if (rank == 0)
    std::printf("# mpi/d, flat/d: their time over dtrain's (above 1: dtrain faster)\n");
}

std::vector<std::size_t> resnet50_shapes() {
  // 161 tensors, 25.56 M elements, 109 under 64 KiB: 53 conv/fc weights spread geometrically
  // from 9,408 to 2.36 M elements, 108 batch-norm vectors of 64..2,048, and the fc bias.
  std::vector<std::size_t> s;
  const std::size_t bn[] = {64, 64, 128, 256, 256, 512, 512, 1024, 1024, 2048, 2048, 256};
  for (int i = 0; i < 108; ++i) s.push_back(bn[i % 12]);
  s.push_back(1000);
  std::vector<std::size_t> big;
  double x = 9408;
  for (int i = 0; i < 52; ++i, x *= 1.104) big.push_back(static_cast<std::size_t>(x));
  std::size_t have = 0;
  for (std::size_t v : s) have += v;
  for (std::size_t v : big) have += v;
  big.push_back(25557032 > have ? 25557032 - have : 1);
  s.insert(s.end(), big.begin(), big.end());
  return s;
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
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const char* mmap_env = std::getenv("MALLOC_MMAP_THRESHOLD_");
  std::vector<char> hosts(static_cast<std::size_t>(size) * 256);
  MPI_Allgather(host, 256, MPI_CHAR, hosts.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
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
