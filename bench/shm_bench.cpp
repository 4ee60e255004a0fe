// The one-node shared-memory allreduce against memcpy measured in the same run (issue 49): every
// rank on one node, float32 sum, out of place, at each size; then the ResNet-50-shaped gradient set
// (161 tensors, in place) through FusedAllreduce against 161 per-tensor MPI_Allreduce calls. Each
// size is reported as a ratio to memcpy: busbw / (S / t), where t is the time of memcpy(out, in, S)
// on every rank at once, on the same buffers, measured right before the allreduce in each round.
// A ratio moves little when the VM as a whole runs slower (both slow down), and a lot when the
// allreduce's own memory traffic or structure changes; so it is what the reference keeps. At 2
// ranks each size also runs the exchange (class Exchange): the bytes a 2-rank allreduce must move
// through shared memory, without arithmetic, the floor of this kind of allreduce.
//
//   mpirun -n 2 --bind-to core shm_bench [--sizes 4096,65536,...] [--rounds N] [--json FILE]
//          [--reference FILE [--tolerance 0.15] [--attempts 3]] [--write-reference FILE]
//          [--loop SECONDS]
//
// --reference: the check (ctest bench_shm_allreduce_guard, label `bench`): a size whose median
// ratio falls more than --tolerance below the reference's is measured again, up to --attempts
// times in all, and fails when no attempt reaches it (the VM's noise passes, a slower path does
// not). --write-reference: the measured ratios become the reference (bench/shm_reference.json).
// --loop: nothing but allreduces of the first size for that long, for a profiler (perf record).
// #wrong counts result elements that differ from the exact integer-valued sum; any fails the run.
// Builds against the public API only, so that the same source measures an older libdtrain
// (bench/shm_compare.sh).
#include "bench_common.hpp"  // MPI's header, through the bench's one wrapper

#include <dlfcn.h>
#include <malloc.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dtrain/bandwidth.hpp>
#include <dtrain/dtrain.hpp>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace coll_bench;

struct Options {
  std::vector<std::size_t> sizes = {std::size_t{4} << 10,  std::size_t{64} << 10,
                                    std::size_t{1} << 20,  std::size_t{16} << 20,
                                    std::size_t{64} << 20, std::size_t{256} << 20};
  int rounds = 7;
  bool fusion = true;
  std::string json_path;
  std::string reference_path;
  std::string write_reference_path;
  double tolerance = 0.15;
  int attempts = 3;
  double loop_s = 0;  // --loop: only allreduces of the first size, for a profiler
};

// One entry's measurement: per round the memcpy and the allreduce time (max over ranks, median of
// the round's batches) and their ratio; the entry reports the medians over rounds.
struct Measured {
  std::vector<double> memcpy_s, op_s, ratio;
  std::vector<double> extra_s;  // the third operation's: exchange (sizes), per-tensor MPI (fusion)
  long long wrong = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times `op` and `memcpy_op` in `rounds` alternating rounds, 3 batches each, after calibrating
// each batch to ~50 ms. `bus`: the busbw factor of op's bytes (2 (p - 1) / p for an allreduce).
Measured measure_rounds(const std::function<void()>& memcpy_op, const std::function<void()>& op,
                        const std::function<void()>& extra_op, int rounds, double bus) {
  const auto calibrate = [](const std::function<void()>& f) {
    f();  // first touch, warm-up
    const double start = MPI_Wtime();
    f();
    double one = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return reps_for(one);
  };
  const int memcpy_reps = calibrate(memcpy_op);
  const int op_reps = calibrate(op);
  const int extra_reps = extra_op ? calibrate(extra_op) : 0;
  Measured m;
  for (int r = 0; r < rounds; ++r) {
    m.memcpy_s.push_back(time_op(memcpy_op, memcpy_reps, 3));
    m.op_s.push_back(time_op(op, op_reps, 3));
    if (extra_op) m.extra_s.push_back(time_op(extra_op, extra_reps, 3));
    m.ratio.push_back(m.memcpy_s.back() / m.op_s.back() * bus);
  }
  return m;
}

// What a 2-rank allreduce has to move through memory both ranks map, and nothing else: each rank
// copies its input into its shared buffer piece by piece (256 KiB, double-buffered, as libdtrain's
// pieces) and copies the other rank's piece out; no arithmetic, no second synchronization. Both
// of libdtrain's 2-rank schedules move this much across (one-shot: the other's whole piece;
// two-shot: half of its input, then half of the results), so this is the floor of any allreduce
// that stages its bytes in shared memory (issue 49's 30 ms at 256 MiB is measured against it).
class Exchange {
 public:
  static constexpr std::size_t kPiece = std::size_t{256} << 10;
  static constexpr std::size_t kHeader = 4096;  // the counters, a line each
  Exchange() {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_);
    int ranks = 0;
    MPI_Comm_size(node_, &ranks);
    MPI_Comm_rank(node_, &me_);
    char* mine = nullptr;
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(kHeader + 2 * kPiece), 1, MPI_INFO_NULL, node_,
                            &mine, &win_);
    std::memset(mine, 0, kHeader);
    for (int r = 0; r < ranks; ++r) {
      MPI_Aint bytes = 0;
      int unit = 0;
      char* base = nullptr;
      MPI_Win_shared_query(win_, r, &bytes, &unit, &base);
      bases_.push_back(base);
    }
    MPI_Barrier(node_);
  }
  ~Exchange() {
    MPI_Win_free(&win_);
    MPI_Comm_free(&node_);
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // Whether it measures what it should: 2 ranks, both on this node.
  bool applies() const { return size == 2 && bases_.size() == 2; }

  void run(const char* in, char* out, std::size_t bytes) {
    const int peer = 1 - me_;
    for (std::size_t off = 0; off < bytes; off += kPiece) {
      const std::size_t len = std::min(kPiece, bytes - off);
      const std::uint64_t k = ++pieces_;
      char* slot = bases_[static_cast<std::size_t>(me_)] + kHeader + (k % 2) * kPiece;
      wait(counter(peer, kRead), k >= 2 ? k - 2 : 0);  // its last read of this buffer
      std::memcpy(slot, in + off, len);
      counter(me_, kPosted).store(k, std::memory_order_release);
      wait(counter(peer, kPosted), k);
      std::memcpy(out + off, bases_[static_cast<std::size_t>(peer)] + kHeader + (k % 2) * kPiece,
                  len);
      counter(me_, kRead).store(k, std::memory_order_release);
    }
  }

 private:
  static constexpr std::size_t kPosted = 0;
  static constexpr std::size_t kRead = 128;
  std::atomic_ref<std::uint64_t> counter(int r, std::size_t which) {
    return std::atomic_ref<std::uint64_t>(
        *reinterpret_cast<std::uint64_t*>(bases_[static_cast<std::size_t>(r)] + which));
  }
  static void wait(std::atomic_ref<std::uint64_t> c, std::uint64_t at_least) {
    for (unsigned spins = 0; c.load(std::memory_order_acquire) < at_least; ++spins) {
      if (spins > 256) sched_yield();
    }
  }
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int me_ = 0;
  std::vector<char*> bases_;
  std::uint64_t pieces_ = 0;
};

Measured allreduce_size(dtrain::Comm& comm, Exchange& exchange, std::size_t bytes, int rounds) {
  const std::size_t n = bytes / sizeof(float);
  std::vector<float> in(n);
  std::vector<float> out(n);
  fill(in);
  std::vector<char> swapped(exchange.applies() ? bytes : 0);
  const auto exchange_op = [&] {
    exchange.run(reinterpret_cast<const char*>(in.data()), swapped.data(), bytes);
  };
  Measured m = measure_rounds(
      [&] { std::memcpy(out.data(), in.data(), bytes); },
      [&] {
        comm.allreduce(in.data(), out.data(), n, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
      },
      exchange.applies() ? std::function<void()>(exchange_op) : nullptr, rounds,
      dtrain::allreduce_bus_factor(size));
  m.wrong = wrong(out);
  MPI_Allreduce(MPI_IN_PLACE, &m.wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return m;
}

Measured fusion_resnet50(dtrain::Comm& comm, int rounds) {
  std::vector<std::vector<float>> tensors;
  std::size_t total = 0;
  for (std::size_t n : resnet50_shapes()) {
    tensors.emplace_back(n);
    total += n;
  }
  std::vector<float> from(total);
  std::vector<float> to(total);
  std::vector<dtrain::FusedAllreduce::Tensor> refs;
  for (auto& t : tensors) refs.push_back({t.data(), t.size()});
  dtrain::FusedAllreduce fused(comm, refs, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
  Measured m = measure_rounds([&] { std::memcpy(to.data(), from.data(), total * sizeof(float)); },
                              [&] { fused.run(); },
                              [&] {
                                for (auto& t : tensors)
                                  MPI_Allreduce(MPI_IN_PLACE, t.data(), static_cast<int>(t.size()),
                                                MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                              },
                              rounds, dtrain::allreduce_bus_factor(size));
  for (auto& t : tensors) fill(t);
  fused.run();
  for (auto& t : tensors) m.wrong += wrong(t);
  MPI_Allreduce(MPI_IN_PLACE, &m.wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return m;
}

std::string size_name(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

// The 1-, 5- and 15-minute load averages (bench_common's load_average() gives the first only).
std::string load_averages_1_5_15() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// The docs' state probe (docs/benchmarks.md, "This machine is bimodal"): a 1 MiB MPI_Allreduce
// takes 150-190 us in the good state and 600-850 us in the bad one.
double mpi_1mib_us() {
  std::vector<float> in(std::size_t{1} << 18, 1.0f);
  std::vector<float> out(in.size());
  return time_op(
             [&] {
               MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM,
                             MPI_COMM_WORLD);
             },
             200, 3) *
         1e6;
}

std::string library_path() {
  Dl_info info{};
  const auto init = static_cast<dtrain::Context (*)()>(&dtrain::init);
  if (dladdr(reinterpret_cast<void*>(init), &info) != 0 && info.dli_fname != nullptr)
    return info.dli_fname;
  return "unknown";
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) sizes.push_back(std::stoull(item));
  return sizes;
}

int usage(const std::string& bad) {
  std::fprintf(stderr,
               "shm_bench: unknown or incomplete argument \"%s\"; expected --sizes B,B,..., "
               "--rounds N, --no-fusion, --json FILE, --reference FILE, --tolerance X, "
               "--attempts N, --write-reference FILE or --loop SECONDS\n",
               bad.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--sizes" && has_value) {
      opt.sizes = parse_sizes(argv[++i]);
    } else if (a == "--rounds" && has_value) {
      opt.rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--no-fusion") {
      opt.fusion = false;
    } else if (a == "--json" && has_value) {
      opt.json_path = argv[++i];
    } else if (a == "--reference" && has_value) {
      opt.reference_path = argv[++i];
    } else if (a == "--tolerance" && has_value) {
      opt.tolerance = std::atof(argv[++i]);
    } else if (a == "--attempts" && has_value) {
      opt.attempts = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--loop" && has_value) {
      opt.loop_s = std::atof(argv[++i]);
    } else if (a == "--write-reference" && has_value) {
      opt.write_reference_path = argv[++i];
    } else {
      return usage(a);
    }
  }
  nlohmann::json reference;
  if (!opt.reference_path.empty()) {
    std::ifstream f(opt.reference_path);
    if (!f) {
      std::fprintf(stderr, "shm_bench: --reference: cannot read %s\n", opt.reference_path.c_str());
      return 2;
    }
    reference = nlohmann::json::parse(f);
  }

  dtrain::Context ctx = dtrain::init();
  int started = 0;
  MPI_Initialized(&started);
  if (started == 0) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Open MPI's per-call temporary buffers on the heap (as MALLOC_MMAP_THRESHOLD_ would): the
  // per-tensor MPI_Allreduce baseline at its best (perf-baselines.md, A3).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  dtrain::Comm& comm = ctx.comm();
  const std::string transport(comm.allreduce_transport());
  if (opt.loop_s > 0) {
    // Nothing but allreduces of the first size for --loop seconds (rank 0's clock decides), so
    // that a profiler of the ranks sees only them.
    const std::size_t n = opt.sizes.front() / sizeof(float);
    std::vector<float> in(n, 1.0f);
    std::vector<float> out(n);
    const double start = MPI_Wtime();
    long calls = 0;
    for (int go = 1; go != 0; calls += 10) {
      for (int i = 0; i < 10; ++i)
        comm.allreduce(in.data(), out.data(), n, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
      go = MPI_Wtime() < start + opt.loop_s ? 1 : 0;
      MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (rank == 0)
      std::printf("# loop: %ld allreduces of %s in %.1f s\n", calls,
                  size_name(opt.sizes.front()).c_str(), MPI_Wtime() - start);
    if (started == 0) MPI_Finalize();
    return 0;
  }
  const std::string load_start = load_averages_1_5_15();
  const double state_start = mpi_1mib_us();
  if (reference.contains("ranks") && reference["ranks"].get<int>() != size) {
    if (rank == 0)
      std::fprintf(stderr, "shm_bench: the reference is for %d ranks, this run has %d\n",
                   reference["ranks"].get<int>(), size);
    return 2;
  }
  if (rank == 0) {
    std::printf("# dtrain shm_bench: %d ranks, allreduce through %s\n", size, transport.c_str());
    std::printf("# libdtrain %s\n", library_path().c_str());
    std::printf(
        "# load average at start %s; state probe: MPI_Allreduce 1 MiB %.0f us "
        "(docs/benchmarks.md: good 150-190, bad 600-850)\n",
        load_start.c_str(), state_start);
    std::printf(
        "# ratio = allreduce busbw / memcpy bandwidth (S / time of memcpy of S on every "
        "rank at once); medians over %d rounds [min-max]\n",
        opt.rounds);
    std::printf("#%11s | %10s %8s | %10s %8s | %6s %13s | %6s\n", "size", "allreduce", "busbw",
                "memcpy", "GB/s", "ratio", "[min-max]", "#wrong");
  }
  nlohmann::json doc = {{"benchmark", "dtrain shm_bench"},
                        {"ranks", size},
                        {"transport", transport},
                        {"library", library_path()},
                        {"load_start", load_start},
                        {"state_probe_mpi_1mib_us_start", state_start},
                        {"entries", nlohmann::json::object()}};
  std::optional<Exchange> exchange_window(std::in_place);  // freed before MPI_Finalize
  Exchange& exchange = *exchange_window;
  std::map<std::string, double> ratios;  // by entry name
  std::vector<std::string> failed;
  const auto report_entry = [&](const std::string& key, const std::string& name, double bytes,
                                const Measured& m, int attempt) {
    const double t = median(m.op_s);
    const double mc = median(m.memcpy_s);
    const double ratio = median(m.ratio);
    const auto [lo, hi] = std::minmax_element(m.ratio.begin(), m.ratio.end());
    total_wrong += m.wrong;
    ratios[key] = ratio;
    nlohmann::json e = {{"name", name},
                        {"bytes", bytes},
                        {"time_us", t * 1e6},
                        {"busbw_gbs", bytes / t / 1e9 * dtrain::allreduce_bus_factor(size)},
                        {"memcpy_us", mc * 1e6},
                        {"memcpy_gbs", bytes / mc / 1e9},
                        {"ratio", ratio},
                        {"ratio_min", *lo},
                        {"ratio_max", *hi},
                        {"rounds", m.ratio},
                        {"attempt", attempt},
                        {"wrong", m.wrong}};
    const bool fusion = key == "resnet50_fused";
    const double extra = median(m.extra_s);
    if (!m.extra_s.empty()) {
      e[fusion ? "mpi_per_tensor_us" : "exchange_us"] = extra * 1e6;
      e[fusion ? "over_mpi_per_tensor" : "over_exchange"] = t / extra;
    }
    doc["entries"][key] = e;
    if (rank != 0) return;
    std::printf("%12s | %10.1f %8.3f | %10.1f %8.3f | %6.3f %6.3f-%-6.3f | %6lld", name.c_str(),
                t * 1e6, bytes / t / 1e9 * dtrain::allreduce_bus_factor(size), mc * 1e6,
                bytes / mc / 1e9, ratio, *lo, *hi, m.wrong);
    if (!m.extra_s.empty()) {
      std::printf(fusion ? "  | per-tensor MPI_Allreduce %.1f us: fused / per-tensor %.3f"
                         : "  | exchange %.1f us: allreduce / exchange %.3f",
                  extra * 1e6, t / extra);
    }
    if (attempt > 1) std::printf("  (attempt %d)", attempt);
    std::printf("\n");
  };
  // The check: whether the entry's ratio reached (1 - tolerance) x the reference's.
  const auto below = [&](const std::string& key) {
    if (reference.is_null() || !reference["ratios"].contains(key)) return false;
    return ratios[key] < reference["ratios"][key].get<double>() * (1 - opt.tolerance);
  };
  const auto run_entry = [&](const std::string& key, const std::function<void(int)>& once) {
    for (int attempt = 1;; ++attempt) {
      once(attempt);
      // Rank 0's verdict for everyone, so that every rank measures the same attempts.
      int again = rank == 0 && below(key) && attempt < opt.attempts ? 1 : 0;
      MPI_Bcast(&again, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (again == 0) break;
    }
    if (rank == 0 && below(key)) failed.push_back(key);
  };
  for (std::size_t bytes : opt.sizes) {
    const std::string key = std::to_string(bytes);
    run_entry(key, [&](int attempt) {
      report_entry(key, size_name(bytes), static_cast<double>(bytes),
                   allreduce_size(comm, exchange, bytes, opt.rounds), attempt);
    });
  }
  if (opt.fusion) {
    if (rank == 0)
      std::printf(
          "# ResNet-50 set, 161 float32 tensors in place through FusedAllreduce "
          "(memcpy: the same bytes packed)\n");
    run_entry("resnet50_fused", [&](int attempt) {
      report_entry("resnet50_fused", "resnet50", 25557032.0 * 4, fusion_resnet50(comm, opt.rounds),
                   attempt);
    });
  }
  const std::string load_end = load_averages_1_5_15();
  const double state_end = mpi_1mib_us();
  doc["load_end"] = load_end;
  doc["state_probe_mpi_1mib_us_end"] = state_end;
  doc["wrong"] = total_wrong;
  int status = total_wrong == 0 ? 0 : 1;
  if (rank == 0) {
    std::printf("# load average at end %s; state probe: MPI_Allreduce 1 MiB %.0f us\n",
                load_end.c_str(), state_end);
    std::printf("# Out of bounds values : %lld %s\n", total_wrong, total_wrong ? "ERROR" : "OK");
    if (!reference.is_null()) {
      std::printf(
          "# reference %s (%s): ratios at least %.0f %% of it\n", opt.reference_path.c_str(),
          reference.value("measured", std::string("no date")).c_str(), (1 - opt.tolerance) * 100);
      for (const auto& [key, want] : reference["ratios"].items()) {
        if (ratios.count(key) == 0) continue;
        const double floor = want.get<double>() * (1 - opt.tolerance);
        const bool bad = std::find(failed.begin(), failed.end(), key) != failed.end();
        std::printf("%s %-14s ratio %.3f, reference %.3f, floor %.3f\n", bad ? "FAIL" : "ok  ",
                    key.c_str(), ratios[key], want.get<double>(), floor);
      }
      if (!failed.empty()) {
        std::printf(
            "shm_bench: %zu of the reference's entries fell more than %.0f %% below it "
            "in each of %d attempts\n",
            failed.size(), opt.tolerance * 100, opt.attempts);
        status = 1;
      }
    }
    if (!opt.json_path.empty()) std::ofstream(opt.json_path) << doc.dump(2) << "\n";
    if (!opt.write_reference_path.empty()) {
      nlohmann::json ref = {{"benchmark", "dtrain shm_bench"},
                            {"ranks", size},
                            {"measured", "load " + load_start + " .. " + load_end + "; MPI 1 MiB " +
                                             std::to_string(state_start) + " us"},
                            {"ratios", ratios}};
      std::ofstream(opt.write_reference_path) << ref.dump(2) << "\n";
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  exchange_window.reset();
  if (started == 0) MPI_Finalize();
  return status;
}
