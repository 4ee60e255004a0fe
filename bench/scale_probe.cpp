// One rank of the emulated-scale runs (bench/scale_emulate.sh, issue 29): start-up, a barrier, a
// 4 KiB and a 1 MiB allreduce, each result checked exactly, then what the rank holds: its open
// descriptors and its peak RSS. The same steps through libdtrain or, with --mpi, through bare MPI
// (MPI_Init, MPI_Barrier, MPI_Allreduce), so that both are measured by one program in one run.
//
//   scale_probe [--mpi] [--kill-rank R] [--loops N] [--groups G [--tp T] [--pp P] [--by B]]
//
// Prints one line per rank: "scale_probe rank=R size=N init_s=... barrier_s=... ar4k_s=...
// ar1m_s=... fds=... rss_kib=... exact=1 transport=...". With --kill-rank, rank R SIGKILLs
// itself after the first allreduces and the others run N more (default 1000) 4 KiB allreduces:
// each survivor prints "scale_probe rank=R lost: <the error's message>" and exits 3.
//
// With --groups (issue 43: sub-communicators at scale), libdtrain only: after the barrier, the
// groups of a 3D-parallel job (T tensor ranks, default 4, consecutive; P pipeline stages, default
// 4; the rest data-parallel), --by color (the default): by splits by color, as Megatron-style
// programs on MPI make them: rounds of a data, a tensor and a pipeline split until the job holds
// at least G groups (one split makes a group per color); --by ranks: by Comm::subgroup, as
// torch's new_group makes them through dtrain's backend (every rank calls it for every group of
// the job, in the same order, each group given its number in that order: no message); --by
// agreed: the same without numbers (the members agree on each group's id). Then a barrier in each
// of the rank's groups, and one more line: "scale_probe rank=R groups=G' by=B calls=C member_of=M
// split_s=... split_cpu_s=... per_group_ms=... group_barriers_s=... fds_before=... fds_made=...
// fds_used=... threads_before=... threads_made=...": G' the groups made in the job, split_cpu_s
// the process's CPU time meanwhile (all its threads), per_group_ms the splits' time divided by G',
// fds_made / fds_used this rank's descriptors once the groups exist / after their barriers.
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.hpp"  // MPI's header, through the bench's one wrapper
#include "dtrain/dtrain.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// This process's CPU time (all its threads), in seconds: what the making cost the rank, apart
// from the time it waited for a core.
double process_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

long open_descriptors() {
  long n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n - 1;  // the directory iterator's own
}

long peak_rss_kib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Of the resident memory now, the shared-memory pages mapped (RssShmem, Linux): they are shared
// with the node's other ranks, so a sum over ranks counts them once per rank mapping them.
long shmem_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("RssShmem:", 0) == 0) return std::strtol(line.c_str() + 9, nullptr, 10);
  }
  return -1;
}

// The collectives under test, whichever library runs them.
struct Steps {
  std::function<void()> barrier;
  std::function<void(std::vector<std::int32_t>&)> allreduce_sum;
};

// Rank r contributes r + i at element i: the sum is size * i + size (size - 1) / 2 everywhere.
bool exact_allreduce(const Steps& steps, int rank, int size, std::size_t n, double* seconds) {
  std::vector<std::int32_t> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<std::int32_t>(i % 1000) + rank;
  const auto start = Clock::now();
  steps.allreduce_sum(x);
  *seconds = since(start);
  const std::int64_t ranks = static_cast<std::int64_t>(size) * (size - 1) / 2;
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] != static_cast<std::int64_t>(i % 1000) * size + ranks) return false;
  }
  return true;
}

int run(const Steps& steps, int rank, int size, double init_s, const std::string& transport,
        int kill_rank, int loops) {
  auto start = Clock::now();
  steps.barrier();
  const double barrier_s = since(start);
  double ar4k = 0;
  double ar1m = 0;
  bool exact = exact_allreduce(steps, rank, size, 1024, &ar4k);
  exact = exact_allreduce(steps, rank, size, 256 * 1024, &ar1m) && exact;
  if (kill_rank >= 0) {
    if (rank == kill_rank) ::kill(::getpid(), SIGKILL);
    try {
      for (int i = 0; i < loops; ++i) {
        double t = 0;
        exact_allreduce(steps, rank, size, 1024, &t);
      }
    } catch (const std::exception& e) {
      std::printf("scale_probe rank=%d lost: %s\n", rank, e.what());
      std::fflush(stdout);
      std::_Exit(3);
    }
    std::printf("scale_probe rank=%d lost: nothing (%d allreduces completed)\n", rank, loops);
    return 4;
  }
  std::printf(
      "scale_probe rank=%d size=%d init_s=%.4f barrier_s=%.4f ar4k_s=%.5f ar1m_s=%.5f fds=%ld "
      "rss_kib=%ld shmem_kib=%ld exact=%d transport=%s\n",
      rank, size, init_s, barrier_s, ar4k, ar1m, open_descriptors(), peak_rss_kib(),
      shmem_rss_kib(), exact ? 1 : 0, transport.c_str());
  std::fflush(stdout);
  return exact ? 0 : 1;
}

long threads_now() {
  long n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)e;
    ++n;
  }
  return n;
}

// The groups of a T x P x D job (tensor ranks consecutive, then pipeline stages, then data
// replicas), by kind: each a list of member lists, in rank order.
struct JobGroups {
  std::vector<std::vector<int>> data, tensor, pipeline;
};
JobGroups job_groups(int size, int tp, int pp) {
  const int dp = size / (tp * pp);
  JobGroups g;
  // A data group: the ranks of one stage with the same tensor index, one per replica (Megatron
  // makes these first).
  for (int stage = 0; stage < pp; ++stage) {
    for (int t = 0; t < tp; ++t) {
      g.data.emplace_back();
      for (int replica = 0; replica < dp; ++replica) {
        g.data.back().push_back(replica * tp * pp + stage * tp + t);
      }
    }
  }
  // A tensor group: a block of T consecutive ranks.
  for (int first = 0; first < size; first += tp) {
    g.tensor.emplace_back();
    for (int t = 0; t < tp; ++t) g.tensor.back().push_back(first + t);
  }
  // A pipeline group: the ranks of one replica with the same tensor index, one per stage.
  for (int replica = 0; replica < dp; ++replica) {
    for (int t = 0; t < tp; ++t) {
      g.pipeline.emplace_back();
      for (int stage = 0; stage < pp; ++stage) {
        g.pipeline.back().push_back(replica * tp * pp + stage * tp + t);
      }
    }
  }
  return g;
}

// Makes the job's groups `by` "color" (Comm::split, as Megatron-style programs on MPI make them:
// one split makes every group of a kind) or "ranks" (Comm::subgroup, as torch's new_group makes
// them: every rank calls it for every group, in the same order, and gets a Comm where a member),
// in rounds of the three kinds until the job holds at least `want` groups.
int make_groups(dtrain::Comm& comm, int want, int tp, int pp, const std::string& by) {
  const int rank = comm.rank();
  const int size = comm.size();
  if (tp < 1 || pp < 1 || size % (tp * pp) != 0) {
    std::fprintf(stderr, "scale_probe: --tp %d --pp %d: expected T x P to divide %d ranks\n", tp,
                 pp, size);
    return 2;
  }
  const JobGroups job = job_groups(size, tp, pp);
  const int dp = size / (tp * pp);
  // This rank's group of each kind, as a color (its index among the groups of that kind).
  const int t = rank % tp;
  const int stage = rank / tp % pp;
  const int replica = rank / (tp * pp);
  const int data_color = stage * tp + t;
  const int tensor_color = rank / tp;
  const int pipeline_color = replica * tp + t;
  const int per_round = size / tp + size / pp + size / dp;
  std::vector<dtrain::Comm> mine;
  const long fds_before = open_descriptors();
  const long threads_before = threads_now();
  int made = 0;
  int calls = 0;
  // From a common start: the ranks leave the allreduces before at times seconds apart when
  // hundreds share 2 cores, and the first split would wait out that skew.
  comm.barrier();
  auto start = Clock::now();
  const double cpu_before = process_cpu_s();
  while (made < want) {
    if (by == "color") {
      for (const int color : {data_color, tensor_color, pipeline_color}) {
        std::optional<dtrain::Comm> g = comm.split(color, rank);
        if (g) mine.push_back(std::move(*g));
        ++calls;
      }
    } else {
      for (const auto* kind : {&job.data, &job.tensor, &job.pipeline}) {
        for (const std::vector<int>& members : *kind) {
          std::optional<dtrain::Comm> g =
              by == "ranks" ? comm.subgroup(members, std::nullopt, calls) : comm.subgroup(members);
          if (g) mine.push_back(std::move(*g));
          ++calls;
        }
      }
    }
    made += per_round;
  }
  const double split_s = since(start);
  const double split_cpu_s = process_cpu_s() - cpu_before;
  const long fds_made = open_descriptors();
  const long threads_made = threads_now();
  start = Clock::now();
  for (dtrain::Comm& g : mine) g.barrier();
  const double barriers_s = since(start);
  comm.barrier();
  std::printf(
      "scale_probe rank=%d groups=%d by=%s calls=%d member_of=%zu split_s=%.4f split_cpu_s=%.4f "
      "per_group_ms=%.4f "
      "group_barriers_s=%.4f fds_before=%ld fds_made=%ld fds_used=%ld threads_before=%ld "
      "threads_made=%ld layout=%dx%dx%d\n",
      rank, made, by.c_str(), calls, mine.size(), split_s, split_cpu_s, 1000.0 * split_s / made,
      barriers_s, fds_before, fds_made, open_descriptors(), threads_before, threads_made, tp, pp,
      dp);
  std::fflush(stdout);
  return 0;
}

int run_mpi(int kill_rank, int loops) {
  auto start = Clock::now();
  MPI_Init(nullptr, nullptr);
  const double init_s = since(start);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Steps steps{[] { MPI_Barrier(MPI_COMM_WORLD); },
                    [](std::vector<std::int32_t>& x) {
                      MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(x.size()), MPI_INT,
                                    MPI_SUM, MPI_COMM_WORLD);
                    }};
  const int rc = run(steps, rank, size, init_s, "mpi", kill_rank, loops);
  MPI_Finalize();
  return rc;
}

int run_dtrain(int kill_rank, int loops, int groups, int tp, int pp, const std::string& by) {
  auto start = Clock::now();
  dtrain::Context ctx = dtrain::init();
  const double init_s = since(start);
  dtrain::Comm& comm = ctx.comm();
  const Steps steps{[&] { comm.barrier(); },
                    [&](std::vector<std::int32_t>& x) {
                      comm.allreduce(std::span<std::int32_t>(x), dtrain::ReduceOp::kSum);
                    }};
  const int rc = run(steps, comm.rank(), comm.size(), init_s,
                     std::string(comm.backend()) + "/" + std::string(comm.allreduce_transport()),
                     kill_rank, loops);
  if (rc != 0 || groups <= 0) return rc;
  return make_groups(comm, groups, tp, pp, by);
}

}  // namespace

int main(int argc, char** argv) {
  bool mpi = false;
  int kill_rank = -1;
  int loops = 1000;
  int groups = 0;
  int tp = 4;
  int pp = 4;
  std::string by = "color";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mpi") {
      mpi = true;
    } else if (a == "--kill-rank" && i + 1 < argc) {
      kill_rank = std::atoi(argv[++i]);
    } else if (a == "--loops" && i + 1 < argc) {
      loops = std::atoi(argv[++i]);
    } else if (a == "--groups" && i + 1 < argc) {
      groups = std::atoi(argv[++i]);
    } else if (a == "--tp" && i + 1 < argc) {
      tp = std::atoi(argv[++i]);
    } else if (a == "--pp" && i + 1 < argc) {
      pp = std::atoi(argv[++i]);
    } else if (a == "--by" && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "color") == 0 || std::strcmp(argv[i + 1], "ranks") == 0 ||
                std::strcmp(argv[i + 1], "agreed") == 0)) {
      by = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: scale_probe [--mpi] [--kill-rank R] [--loops N] [--groups G [--tp T] "
                   "[--pp P] [--by color|ranks|agreed]]\n");
      return 2;
    }
  }
  try {
    return mpi ? run_mpi(kill_rank, loops) : run_dtrain(kill_rank, loops, groups, tp, pp, by);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scale_probe: %s\n", e.what());
    return 1;
  }
}
