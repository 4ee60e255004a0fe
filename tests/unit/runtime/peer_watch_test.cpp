// A peer process that ends is noticed at once and reported as the user reads it: the PeerWatch
// over a forked child standing in for another rank on this node, and the Engine's report (one
// stderr line, the same text as the running collective's error) over a stand-in communicator.
#include "comm/peer_watch.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/engine.hpp"

namespace {

using dtrain::DType;
using dtrain::Error;
using dtrain::ReduceOp;
using dtrain::runtime::Communicator;
using dtrain::runtime::Engine;
using dtrain::runtime::PeerProcess;
using dtrain::runtime::PeerWatch;
using namespace std::chrono_literals;

// A child process that waits to be killed: another rank's process on this node.
class Child {
 public:
  Child() : pid_(fork()) {
    if (pid_ == 0) {
      for (;;) pause();
    }
  }
  ~Child() { kill_and_reap(); }
  pid_t pid() const { return pid_; }
  void kill_and_reap() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_;
};

PeerProcess as_rank(int rank, pid_t pid, const PeerProcess& like) {
  PeerProcess p = like;
  p.rank = rank;
  p.pid = pid;
  return p;
}

// What the watch reported, waited for with a limit.
struct Reports {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<PeerProcess> lost;
  std::optional<PeerProcess> wait_first(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex);
    if (!cv.wait_for(lock, limit, [&] { return !lost.empty(); })) return std::nullopt;
    return lost.front();
  }
  PeerWatch::OnLost callback() {
    return [this](const PeerProcess& p) {
      std::lock_guard lock(mutex);
      lost.push_back(p);
      cv.notify_all();
    };
  }
};

TEST(PeerWatch, ReportsAKilledPeerOnThisNodeAtOnce) {
  Child child;
  const PeerProcess self = dtrain::runtime::this_process(0, "node7");
  ASSERT_FALSE(self.node.empty()) << "no boot id or pid namespace here";
  Reports reports;
  PeerWatch watch({self, as_rank(1, child.pid(), self)}, self, reports.callback());
  ASSERT_EQ(watch.watched(), 1u);
  EXPECT_FALSE(reports.wait_first(50ms)) << "reported a peer that is still alive";
  const auto start = std::chrono::steady_clock::now();
  child.kill_and_reap();
  const auto lost = reports.wait_first(5s);
  ASSERT_TRUE(lost) << "a killed peer was not reported within 5 s";
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_EQ(lost->rank, 1);
  EXPECT_EQ(lost->host, "node7");
}

TEST(PeerWatch, LeavesProcessesOfOtherNodesAndNamespacesAlone) {
  Child child;
  const PeerProcess self = dtrain::runtime::this_process(0, "node7");
  PeerProcess elsewhere = as_rank(1, child.pid(), self);
  elsewhere.node = "another-boot-id/0:4026531836";  // the same pid means another process there
  PeerProcess unknown = as_rank(2, child.pid(), self);
  unknown.node.clear();
  Reports reports;
  PeerWatch watch({self, elsewhere, unknown}, self, reports.callback());
  EXPECT_EQ(watch.watched(), 0u);
  child.kill_and_reap();
  EXPECT_FALSE(reports.wait_first(200ms));
}

TEST(PeerWatch, RecordsCarryRankPidAndNodeButNotTheHost) {
  const PeerProcess self = dtrain::runtime::this_process(3, "node7");
  const std::string record = dtrain::runtime::encode_peer_record(self);
  ASSERT_EQ(record.size(), dtrain::runtime::kPeerRecordBytes);
  const PeerProcess back = dtrain::runtime::decode_peer_record(record.data(), "here");
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.pid, getpid());
  EXPECT_EQ(back.node, self.node);
  EXPECT_EQ(back.host, "here");
  const std::string junk(dtrain::runtime::kPeerRecordBytes, 'x');
  EXPECT_TRUE(dtrain::runtime::decode_peer_record(junk.data(), "here").node.empty());
}

// A communicator of 4 ranks whose collectives block until the process ends (a peer that never
// answers), listing rank 1 as a process on this node.
class StuckComm final : public Communicator {
 public:
  StuckComm(pid_t peer, bool peers_may_exit) : may_exit_(peers_may_exit) {
    const PeerProcess self = dtrain::runtime::this_process(0, "node7");
    node_ = {self, as_rank(1, peer, self)};
  }
  void allreduce(const void*, void*, std::size_t, DType, ReduceOp) override { block(); }
  void broadcast(void*, std::size_t, DType, int) override {}
  void allgather(const void*, void*, std::size_t, DType) override {}
  void reduce_scatter(const void*, void*, std::size_t, DType, ReduceOp) override {}
  void barrier() override {}
  std::string_view backend() const override { return "fake"; }
  std::vector<PeerProcess> node_processes() const override { return node_; }
  bool peers_may_exit() const override { return may_exit_; }

 private:
  static void block() {
    for (;;) std::this_thread::sleep_for(1h);
  }
  std::vector<PeerProcess> node_;
  bool may_exit_;
};

constexpr const char* kLost =
    "peer process lost: rank 1 (on node7) was killed or exited without finalizing; this rank's "
    "collectives fail from now on";

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kComm) << e.what();
    return e.what();
  }
  return "(no error)";
}

TEST(EnginePeerLoss, TheRunningCollectiveFailsNamingTheLostRankAndStderrSaysSoFirst) {
  Child child;
  auto engine = std::make_unique<Engine>(std::make_unique<StuckComm>(child.pid(), false), 0, 4,
                                         std::chrono::milliseconds(60'000));
  testing::internal::CaptureStderr();
  auto stuck = engine->submit("allreduce", 4096, [&] {
    engine->backend().allreduce(nullptr, nullptr, 1024, DType::kFloat32, ReduceOp::kSum);
  });
  std::this_thread::sleep_for(50ms);  // it is now running, waiting for rank 1
  const auto start = std::chrono::steady_clock::now();
  child.kill_and_reap();
  const std::string expected =
      std::string("dtrain: allreduce #0 (4096 bytes, fake, rank 0 of 4): ") + kLost;
  EXPECT_EQ(error_of([&] { engine->wait(*stuck); }), expected);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), expected + "\n");
  EXPECT_EQ(error_of([&] { engine->run("barrier", 0, [] {}); }),
            "dtrain: communicator unusable after an earlier failure: " + expected);
  // The stuck collective's thread is left behind, as after a timeout.
  engine.reset();
}

TEST(EnginePeerLoss, BetweenCollectivesTheReportSaysWhichCollectiveIsNext) {
  Child child;
  Engine engine(std::make_unique<StuckComm>(child.pid(), false), 0, 4,
                std::chrono::milliseconds(60'000));
  engine.run("barrier", 0, [] {});
  testing::internal::CaptureStderr();
  child.kill_and_reap();
  std::string error;
  for (int i = 0; i < 500 && error.empty(); ++i) {  // check_overdue() numbers no collective
    try {
      engine.check_overdue();
      std::this_thread::sleep_for(10ms);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  const std::string report =
      std::string("dtrain: between collectives (fake, rank 0 of 4, next #1): ") + kLost;
  EXPECT_EQ(testing::internal::GetCapturedStderr(), report + "\n");
  EXPECT_EQ(error, "dtrain: communicator unusable after an earlier failure: " + report);
}

TEST(EnginePeerLoss, APeerEndingAfterMpiFinalizeIsNoLoss) {
  Child child;
  Engine engine(std::make_unique<StuckComm>(child.pid(), true), 0, 4,
                std::chrono::milliseconds(60'000));
  testing::internal::CaptureStderr();
  child.kill_and_reap();
  std::this_thread::sleep_for(200ms);
  EXPECT_NO_THROW(engine.run("barrier", 0, [] {}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
