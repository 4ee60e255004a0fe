// The one ladder of the host collectives (comm/router.hpp), pinned for both backends that use it
// (the pure choice, route, is router_route_test.cpp's): the set-up ladder (Router::set_up)
// step by step over a NodeSetup of threads as ranks, and threads as ranks running each path for
// real through a Router per rank (shared memory over this process's memory, the hierarchy and
// recursive doubling over in-memory mailboxes), with the backend's flat call counted. The MPI and
// TCP backends differ only in their hierarchy thresholds (hierarchy_above) and whether the
// doubling polls; everything else is this one ladder.
#include "comm/router.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hierarchy_ranks.hpp"

namespace {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::AllreduceAlgo;
using dtrain::runtime::Collective;
using dtrain::runtime::FlatCollectives;
using dtrain::runtime::hierarchy_above;
using dtrain::runtime::LinkBackend;
using dtrain::runtime::Path;
using dtrain::runtime::path_name;
using dtrain::runtime::route;
using dtrain::runtime::Router;
using dtrain::test::expected;
using dtrain::test::k2x2;
using dtrain::test::k4x1;
using dtrain::test::Mailboxes;
using dtrain::test::MemoryTransport;
using dtrain::test::plan_layout;
using dtrain::test::Segments;
using dtrain::test::value;

// The backend's flat collectives, counted; they leave the output alone (a test that reaches
// them checks only that the ladder did).
struct CountingFlat final : FlatCollectives {
  int calls = 0;
  void flat_allreduce(const void*, void*, std::size_t, DType, ReduceOp) override { ++calls; }
  void flat_reduce_scatter(const void*, void*, std::size_t, DType, ReduceOp) override { ++calls; }
  void flat_allgather(const void*, void*, std::size_t, DType) override { ++calls; }
};

struct Call {
  Collective op;
  std::size_t count;  // floats per rank (allreduce) or per block (reduce_scatter, allgather)
};

// What each call did on every rank: the path, whether the flat call ran, whether the result was
// exact (true for the flat path, whose result the counting backend does not write).
struct Seen {
  Path path;
  bool flat_ran;
  bool exact;
};

// What one rank of a run says of itself: DTRAIN_ALGO, DTRAIN_SHM, and whether its node's memory
// can be mapped.
struct RankSettings {
  AllreduceAlgo algo = AllreduceAlgo::kAuto;
  bool shm = true;
  bool maps = true;
};

// The votes' minimum among threads as ranks, round after round.
class Votes {
 public:
  explicit Votes(int p) : p_(p) {}
  std::int32_t least(std::int32_t value) {
    std::unique_lock<std::mutex> lock(mutex_);
    const long round = round_;
    acc_ = arrived_ == 0 ? value : std::min(acc_, value);
    if (++arrived_ == p_) {
      result_ = acc_;
      arrived_ = 0;
      ++round_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return round_ != round; });
    }
    return result_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int p_;
  int arrived_ = 0;
  long round_ = 0;
  std::int32_t acc_ = 0;
  std::int32_t result_ = 0;
};

// A backend's set-up steps (NodeSetup) over threads as ranks, each step written down as the
// rank took it: "least 1 -> 0", "hosts", "map 0,1 (65536 B pieces)", "link".
struct Job {
  std::vector<std::string> hosts;
  Votes votes;
  Mailboxes link_boxes;
  std::mutex mutex;
  std::map<std::pair<int, std::size_t>, std::unique_ptr<Segments>> memory;  // (first, piece)
};

class ThreadSetup final : public dtrain::runtime::NodeSetup {
 public:
  ThreadSetup(Job& job, int rank, bool maps) : job_(job), rank_(rank), maps_(maps) {}
  std::int32_t least(std::int32_t value) override {
    const std::int32_t least = job_.votes.least(value);
    steps.push_back("least " + std::to_string(value) + " -> " + std::to_string(least));
    return least;
  }
  std::vector<std::string> hosts() override {
    steps.emplace_back("hosts");
    return job_.hosts;
  }
  std::vector<char*> map_node(const std::vector<int>& members, std::size_t piece_bytes) override {
    std::string step = "map";
    for (std::size_t i = 0; i < members.size(); ++i)
      step += (i == 0 ? " " : ",") + std::to_string(members[i]);
    steps.push_back(step + " (" + std::to_string(piece_bytes) + " B pieces)");
    // As node_memory.hpp: one rank that cannot map leaves every rank without.
    if (job_.votes.least(maps_ ? 1 : 0) == 0) return {};
    const std::lock_guard<std::mutex> lock(job_.mutex);
    auto& seg = job_.memory[{members.front(), piece_bytes}];
    if (!seg) seg = std::make_unique<Segments>(static_cast<int>(members.size()), piece_bytes);
    return seg->pointers;
  }
  std::unique_ptr<dtrain::runtime::PeerTransport> make_link(
      const dtrain::runtime::NodeLayout& layout) override {
    EXPECT_EQ(layout.node_ranks, plan_layout(job_.hosts, rank_).node_ranks);
    steps.emplace_back("link");
    return std::make_unique<MemoryTransport>(rank_, job_.link_boxes);
  }
  std::vector<std::string> steps;

 private:
  Job& job_;
  int rank_;
  bool maps_;
};

// A run: by rank, what each call did and the set-up steps taken (or the set-up's error); rank
// 0's allreduce_transport.
struct RunResult {
  std::vector<std::vector<Seen>> seen;
  std::vector<std::vector<std::string>> steps;
  std::vector<std::string> errors;
  std::string transport;
};

// Runs `calls` on `hosts` through a Router per thread, set up by Router::set_up (each rank's
// `settings`, kAuto with shared memory by default) over ThreadSetup, with `backend`'s
// thresholds.
RunResult run_ranks(const std::vector<std::string>& hosts, LinkBackend backend,
                    const std::vector<Call>& calls, std::vector<RankSettings> settings = {}) {
  const int p = static_cast<int>(hosts.size());
  settings.resize(static_cast<std::size_t>(p));
  const bool one_node = std::all_of(hosts.begin(), hosts.end(),
                                    [&](const std::string& h) { return h == hosts.front(); });
  Job job{hosts, Votes(p), {}, {}, {}};
  Mailboxes doubling_boxes;
  RunResult run;
  run.seen.resize(static_cast<std::size_t>(p));
  run.steps.resize(static_cast<std::size_t>(p));
  run.errors.resize(static_cast<std::size_t>(p));
  dtrain::test::threads_as_ranks(p, [&](int r) {
    const RankSettings& mine = settings[static_cast<std::size_t>(r)];
    CountingFlat flat;
    MemoryTransport doubling_net(r, doubling_boxes);
    Router router(
        r, p, !one_node, backend, flat,
        [&](const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes,
            int from) {
          if (to >= 0) doubling_net.send(0, send, send_bytes, to);
          if (from >= 0) doubling_net.recv(0, recv, recv_bytes, from);
          while (!doubling_net.done(0)) std::this_thread::yield();
        },
        [] {}, backend == LinkBackend::kMpi);
    ThreadSetup setup(job, r, mine.maps);
    try {
      router.set_up(mine.algo, mine.shm, setup);
    } catch (const dtrain::Error& e) {
      run.errors[static_cast<std::size_t>(r)] = e.what();
    }
    run.steps[static_cast<std::size_t>(r)] = setup.steps;
    if (!run.errors[static_cast<std::size_t>(r)].empty()) return;
    for (const Call& c : calls) {
      const int before = flat.calls;
      const std::size_t elem = sizeof(float);
      Seen s{};
      bool exact = true;
      if (c.op == Collective::kAllreduce) {
        s.path = router.path(c.op, c.count * elem);
        std::vector<float> buf(c.count);
        for (std::size_t i = 0; i < c.count; ++i) buf[i] = value<float>(r, i);
        router.allreduce(buf.data(), buf.data(), c.count, DType::kFloat32, ReduceOp::kSum);
        for (std::size_t i = 0; i < c.count; ++i)
          exact = exact && buf[i] == expected<float>(p, i, ReduceOp::kSum);
      } else if (c.op == Collective::kReduceScatter) {
        s.path = router.path(c.op, c.count * elem * static_cast<std::size_t>(p));
        std::vector<float> in(c.count * static_cast<std::size_t>(p));
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = value<float>(r, i);
        std::vector<float> out(c.count);
        router.reduce_scatter(in.data(), out.data(), c.count, DType::kFloat32, ReduceOp::kSum);
        for (std::size_t i = 0; i < c.count; ++i) {
          exact = exact && out[i] == expected<float>(p, static_cast<std::size_t>(r) * c.count + i,
                                                     ReduceOp::kSum);
        }
      } else {
        s.path = router.path(c.op, c.count * elem * static_cast<std::size_t>(p));
        std::vector<float> mine_block(c.count, static_cast<float>(r + 1));
        std::vector<float> all(c.count * static_cast<std::size_t>(p));
        router.allgather(mine_block.data(), all.data(), c.count, DType::kFloat32);
        for (std::size_t i = 0; i < all.size(); ++i)
          exact = exact && all[i] == static_cast<float>(i / c.count + 1);
      }
      s.flat_ran = flat.calls > before;
      s.exact = s.flat_ran || exact;
      run.seen[static_cast<std::size_t>(r)].push_back(s);
    }
    if (r == 0) run.transport = router.allreduce_transport("backend");
    router.release();
  });
  return run;
}

std::vector<std::vector<Seen>> run_router(const std::vector<std::string>& hosts,
                                          LinkBackend backend, const std::vector<Call>& calls,
                                          std::string* transport = nullptr) {
  RunResult run = run_ranks(hosts, backend, calls);
  if (transport != nullptr) *transport = run.transport;
  return run.seen;
}

// Every rank took `path` for call `i`, exactly, with the flat call run only on the flat path.
void expect_every_rank(const std::vector<std::vector<Seen>>& seen, std::size_t i, Path path) {
  for (std::size_t r = 0; r < seen.size(); ++r) {
    EXPECT_EQ(path_name(seen[r][i].path), path_name(path)) << "rank " << r << ", call " << i;
    EXPECT_EQ(seen[r][i].flat_ran, path == Path::kFlat) << "rank " << r << ", call " << i;
    EXPECT_TRUE(seen[r][i].exact) << "rank " << r << ", call " << i;
  }
}

TEST(Router, OneNodeTakesSharedMemoryOnBothBackends) {
  const std::vector<std::string> one = {"n1", "n1", "n1"};
  for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
    std::string transport;
    const auto seen = run_router(one, b,
                                 {{Collective::kAllreduce, 1},
                                  {Collective::kAllreduce, 300 * 1024},
                                  {Collective::kReduceScatter, 16}},
                                 &transport);
    expect_every_rank(seen, 0, Path::kSharedMemory);
    expect_every_rank(seen, 1, Path::kSharedMemory);
    expect_every_rank(seen, 2, Path::kFlat);
    EXPECT_EQ(transport, "shared memory");
  }
}

TEST(Router, TwoNodesOfTwoOnMpiDoubleSmallAndGoHierarchicalAbove4KiB) {
  std::string transport;
  const auto seen = run_router(k2x2, LinkBackend::kMpi,
                               {{Collective::kAllreduce, 256},
                                {Collective::kAllreduce, 64 * 1024},
                                {Collective::kReduceScatter, 256},
                                {Collective::kReduceScatter, 16 * 1024},
                                {Collective::kAllgather, 16 * 1024}},
                               &transport);
  expect_every_rank(seen, 0, Path::kDoubling);
  expect_every_rank(seen, 1, Path::kHierarchy);
  expect_every_rank(seen, 2, Path::kFlat);
  expect_every_rank(seen, 3, Path::kHierarchy);
  expect_every_rank(seen, 4, Path::kHierarchy);
  EXPECT_EQ(transport, "hierarchical");
}

TEST(Router, TwoNodesOfTwoOnTcpDoubleSmallAllreducesAndGoHierarchicalOtherwise) {
  const auto seen = run_router(k2x2, LinkBackend::kTcp,
                               {{Collective::kAllreduce, 1},
                                {Collective::kAllreduce, 64 * 1024},
                                {Collective::kReduceScatter, 4},
                                {Collective::kAllgather, 4}});
  expect_every_rank(seen, 0, Path::kDoubling);
  expect_every_rank(seen, 1, Path::kHierarchy);
  expect_every_rank(seen, 2, Path::kHierarchy);
  expect_every_rank(seen, 3, Path::kHierarchy);
}

TEST(Router, OneRankPerNodeDoublesSmallAllreducesAndRingsLargeOnesAmongTheNodesOnMpi) {
  for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
    std::string transport;
    const auto seen = run_router(k4x1, b,
                                 {{Collective::kAllreduce, 1000},
                                  {Collective::kAllreduce, 4096},
                                  {Collective::kAllreduce, 64 * 1024},
                                  {Collective::kAllreduce, 256 * 1024}},
                                 &transport);
    expect_every_rank(seen, 0, Path::kDoubling);
    // 16 KiB: MPI's own algorithms; the TCP backend halves and doubles up to 256 KiB. From
    // 256 KiB the ring among nodes on MPI, while the TCP backend keeps its own ring with one rank
    // per node above 256 KiB.
    const bool mpi = b == LinkBackend::kMpi;
    expect_every_rank(seen, 1, mpi ? Path::kFlat : Path::kHalving);
    expect_every_rank(seen, 2, mpi ? Path::kHierarchy : Path::kHalving);
    expect_every_rank(seen, 3, mpi ? Path::kHierarchy : Path::kFlat);
    EXPECT_EQ(transport, b == LinkBackend::kMpi ? "hierarchical" : "backend");
  }
}

TEST(Router, UnevenNodesTakeTheHierarchyForAllreducesAndTheRingForTheOthers) {
  const std::vector<std::string> uneven = {"n1", "n2", "n1", "n2", "n1"};
  for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
    std::string transport;
    const auto seen = run_router(uneven, b,
                                 {{Collective::kAllreduce, 300 * 1024},
                                  {Collective::kReduceScatter, 100 * 1024 + 3},
                                  {Collective::kAllgather, 100 * 1024 + 5},
                                  {Collective::kReduceScatter, 16}},
                                 &transport);
    expect_every_rank(seen, 0, Path::kHierarchy);
    expect_every_rank(seen, 1, Path::kRing);
    expect_every_rank(seen, 2, Path::kRing);
    expect_every_rank(seen, 3, Path::kFlat);
    EXPECT_EQ(transport, "hierarchical");
  }
}

// The set-up ladder (Router::set_up), pinned step by step for both backends: the votes, their
// order, and which memory and link each rung asks the backend for.
const std::string kShmPieces =
    std::to_string(dtrain::runtime::ShmAllreduce::kPieceBytes) + " B pieces)";
const std::string kHierPieces =
    std::to_string(dtrain::runtime::Hierarchy::kPieceBytes) + " B pieces)";
using Steps = std::vector<std::string>;

TEST(RouterSetUp, OneNodeVotesOnSharedMemoryThenMapsOneSegmentPerRank) {
  for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
    const RunResult run = run_ranks({"n1", "n1", "n1"}, b, {{Collective::kAllreduce, 1}});
    for (const Steps& steps : run.steps) {
      EXPECT_EQ(steps, (Steps{"least 1 -> 1", "map 0,1,2 (" + kShmPieces}));
    }
    expect_every_rank(run.seen, 0, Path::kSharedMemory);
    EXPECT_EQ(run.transport, "shared memory");
  }
}

TEST(RouterSetUp, OneRankWithSharedMemoryOffTurnsItOffForEveryRank) {
  for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
    const RunResult run = run_ranks({"n1", "n1", "n1"}, b, {{Collective::kAllreduce, 1}},
                                    {{}, {AllreduceAlgo::kAuto, false}, {}});
    // Then the hierarchy's vote, which kAuto without shared memory never wants.
    EXPECT_EQ(run.steps[0], (Steps{"least 1 -> 0", "hosts", "least 0 -> 0"}));
    EXPECT_EQ(run.steps[1], (Steps{"least 0 -> 0", "hosts", "least 0 -> 0"}));
    EXPECT_EQ(run.steps[2], run.steps[0]);
    expect_every_rank(run.seen, 0, Path::kDoubling);
    EXPECT_EQ(run.transport, "backend");
  }
}

TEST(RouterSetUp, OneNodeWhoseMemoryCannotBeMappedKeepsToTheBackend) {
  const RunResult run = run_ranks({"n1", "n1"}, LinkBackend::kTcp, {{Collective::kAllreduce, 1}},
                                  {{}, {AllreduceAlgo::kAuto, true, false}});
  for (const Steps& steps : run.steps) {
    EXPECT_EQ(steps, (Steps{"least 1 -> 1", "map 0,1 (" + kShmPieces}));
  }
  expect_every_rank(run.seen, 0, Path::kDoubling);
  EXPECT_EQ(run.transport, "backend");
}

TEST(RouterSetUp, AcrossNodesEachRankVotesOnItsLayoutThenMapsItsNodeAndLinks) {
  for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
    const RunResult run = run_ranks(k2x2, b, {{Collective::kAllreduce, 64 * 1024}});
    EXPECT_EQ(run.steps[0], (Steps{"hosts", "least 1 -> 1", "map 0,1 (" + kHierPieces, "link"}));
    EXPECT_EQ(run.steps[1], run.steps[0]);
    EXPECT_EQ(run.steps[3], (Steps{"hosts", "least 1 -> 1", "map 2,3 (" + kHierPieces, "link"}));
    expect_every_rank(run.seen, 0, Path::kHierarchy);
    EXPECT_EQ(run.transport, "hierarchical");
  }
}

TEST(RouterSetUp, OneRankThatWantsNoHierarchyKeepsEveryRankFlat) {
  for (const RankSettings& odd :
       {RankSettings{AllreduceAlgo::kFlat, true}, RankSettings{AllreduceAlgo::kAuto, false}}) {
    const RunResult run = run_ranks(k2x2, LinkBackend::kMpi, {{Collective::kAllreduce, 64 * 1024}},
                                    {{}, {}, odd, {}});
    EXPECT_EQ(run.steps[0], (Steps{"hosts", "least 1 -> 0"}));
    EXPECT_EQ(run.steps[2], (Steps{"hosts", "least 0 -> 0"}));
    expect_every_rank(run.seen, 0, Path::kFlat);
    EXPECT_EQ(run.transport, "backend");
  }
}

TEST(RouterSetUp, ForcedHierarchyVotesTwoAndWinsOverSharedMemoryOff) {
  const RankSettings forced{AllreduceAlgo::kHierarchical, false};
  const RunResult all = run_ranks(k2x2, LinkBackend::kTcp, {{Collective::kAllreduce, 1}},
                                  {forced, forced, forced, forced});
  EXPECT_EQ(all.steps[0], (Steps{"hosts", "least 2 -> 2", "map 0,1 (" + kHierPieces, "link"}));
  // kHierarchical: every size, even where the doubling would pay.
  expect_every_rank(all.seen, 0, Path::kHierarchy);
  // One rank forced, the others kAuto: the least vote, kAuto's thresholds.
  const RunResult one = run_ranks(k2x2, LinkBackend::kMpi, {{Collective::kAllreduce, 1}},
                                  {{AllreduceAlgo::kHierarchical, true}, {}, {}, {}});
  EXPECT_EQ(one.steps[0], (Steps{"hosts", "least 2 -> 1", "map 0,1 (" + kHierPieces, "link"}));
  expect_every_rank(one.seen, 0, Path::kDoubling);
  EXPECT_EQ(one.transport, "hierarchical");
}

TEST(RouterSetUp, OneNodeWithoutSharedMemoryStillVotesOnTheForcedHierarchy) {
  const RankSettings forced{AllreduceAlgo::kHierarchical, false};
  const RunResult run =
      run_ranks({"n1", "n1"}, LinkBackend::kMpi, {{Collective::kAllreduce, 1}}, {forced, forced});
  for (const Steps& steps : run.steps) {
    EXPECT_EQ(steps,
              (Steps{"least 0 -> 0", "hosts", "least 2 -> 2", "map 0,1 (" + kHierPieces, "link"}));
  }
  expect_every_rank(run.seen, 0, Path::kHierarchy);
}

TEST(RouterSetUp, NodeMemoryThatCannotBeMappedLeavesNoHierarchy) {
  const RunResult run = run_ranks(k2x2, LinkBackend::kTcp, {{Collective::kAllreduce, 64 * 1024}},
                                  {{}, {}, {}, {AllreduceAlgo::kAuto, true, false}});
  EXPECT_EQ(run.steps[0], (Steps{"hosts", "least 1 -> 1", "map 0,1 (" + kHierPieces}));
  EXPECT_EQ(run.steps[3], (Steps{"hosts", "least 1 -> 1", "map 2,3 (" + kHierPieces}));
  EXPECT_EQ(run.transport, "backend");
}

}  // namespace
