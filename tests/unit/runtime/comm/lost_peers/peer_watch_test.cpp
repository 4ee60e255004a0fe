// A peer process that ends is noticed at once and reported as the user reads it: the PeerWatch
// over a forked child standing in for another rank on this node, the alarm that passes the loss
// on to other nodes and reports theirs (over loopback sockets), and the Engine's report (one
// stderr line, the same text as the running collective's error) over a stand-in communicator.
#include "comm/lost_peers/peer_watch.hpp"

#include <gtest/gtest.h>
#include <poll.h>
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
#include "comm/lost_peers/peer_alarm.hpp"
#include "loopback_job.hpp"
#include "peer_watch_support.hpp"

namespace {

using dtrain::DType;
using dtrain::Error;
using dtrain::ReduceOp;
using dtrain::runtime::Alarm;
using dtrain::runtime::Communicator;
using dtrain::runtime::Engine;
using dtrain::runtime::PeerProcess;
using dtrain::runtime::PeerWatch;
using dtrain::test::as_rank;
using dtrain::test::Child;
using dtrain::test::kToken;
using dtrain::test::LoopbackJob;
using dtrain::test::Reports;
using namespace std::chrono_literals;

dtrain::runtime::Settings with_timeout(std::chrono::milliseconds timeout) {
  dtrain::runtime::Settings s;
  s.timeout = timeout;
  return s;
}

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
  EXPECT_EQ(reports.told_by.front(), -1);
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

// The alarms a receiving rank's socket got within `ms`.
std::vector<Alarm> alarms_within(const dtrain::runtime::PeerAlarm& at, int ms) {
  std::vector<Alarm> got;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    pollfd p{at.fd(), POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return got;
    while (auto alarm = at.receive()) got.push_back(*alarm);
  }
}

TEST(PeerWatchAlarm, AnotherNodesAlarmIsReportedOnceNamingTheRankItsHostAndTheWitness) {
  // This is rank 0 (alone on its node); ranks 2 and 3 are on node2.
  LoopbackJob job(4, kToken);
  Reports reports;
  PeerWatch watch({}, dtrain::runtime::this_process(0, "node1"), reports.callback(),
                  job.alarm(0, {1, 2, 3}));
  job.send_raw(0, dtrain::runtime::encode_alarm(kToken + 1, {3, "node2", 2}));  // another job's
  job.send_raw(0, "junk");
  EXPECT_FALSE(reports.wait_first(100ms)) << "a stray datagram was taken for an alarm";
  for (int i = 0; i < PeerWatch::kAlarmSends; ++i) {  // as the sender repeats it
    job.send_raw(0, dtrain::runtime::encode_alarm(kToken, {3, "node2", 2}));
  }
  job.send_raw(0, dtrain::runtime::encode_alarm(kToken, {1, "node1", 0}));  // a later loss
  const auto lost = reports.wait_first(2s);
  ASSERT_TRUE(lost) << "a valid alarm was not reported";
  EXPECT_EQ(lost->rank, 3);
  EXPECT_EQ(lost->host, "node2");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(reports.count(), 1u) << "only the first loss is reported";
  EXPECT_EQ(reports.told_by.front(), 2);
}

TEST(PeerWatchAlarm, ALossSeenHereIsPassedOnToTheOtherNodes) {
  // This is rank 0 on node7, rank 1 (the child) beside it; ranks 2 and 3 are elsewhere.
  Child child;
  const PeerProcess self = dtrain::runtime::this_process(0, "node7");
  LoopbackJob job(4, kToken);
  const auto rank2 = job.alarm(2, {0, 1});
  const auto rank3 = job.alarm(3, {0, 1});
  Reports reports;
  PeerWatch watch({self, as_rank(1, child.pid(), self)}, self, reports.callback(),
                  job.alarm(0, {2, 3}));
  child.kill_and_reap();
  ASSERT_TRUE(reports.wait_first(5s)) << "the loss was not seen here";
  for (const auto* other : {rank2.get(), rank3.get()}) {
    const std::vector<Alarm> got = alarms_within(*other, 500);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(PeerWatch::kAlarmSends));
    EXPECT_EQ(got.front().lost, 1);
    EXPECT_EQ(got.front().lost_host, "node7");
    EXPECT_EQ(got.front().reporter, 0);
  }
}

TEST(PeerWatchAlarm, ALossNotReportedHereIsNotPassedOn) {
  // MPI finalizing or an earlier failure here: the engine reports nothing, and nor does the alarm.
  Child child;
  const PeerProcess self = dtrain::runtime::this_process(0, "node7");
  LoopbackJob job(3, kToken);
  const auto rank2 = job.alarm(2, {0, 1});
  Reports reports;
  reports.reported = false;
  PeerWatch watch({self, as_rank(1, child.pid(), self)}, self, reports.callback(),
                  job.alarm(0, {2}));
  child.kill_and_reap();
  ASSERT_TRUE(reports.wait_first(5s));
  EXPECT_TRUE(alarms_within(*rank2, 200).empty());
}

TEST(PeerWatchAlarm, ARankLeavingAfterAnErrorTellsEveryRankItself) {
  // This is rank 1 on node7, leaving (Context::abort); rank 0 beside it, ranks 2 and 3 elsewhere.
  LoopbackJob job(4, kToken);
  const auto rank0 = job.alarm(0, {1, 2, 3});
  const auto rank2 = job.alarm(2, {0, 1, 3});
  Reports reports;
  PeerWatch watch({}, dtrain::runtime::this_process(1, "node7"), reports.callback(),
                  job.alarm(1, {0, 2, 3}));
  watch.leave();
  for (const auto* other : {rank0.get(), rank2.get()}) {
    const std::vector<Alarm> got = alarms_within(*other, 500);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(PeerWatch::kAlarmSends));
    EXPECT_EQ(got.front().lost, 1);
    EXPECT_EQ(got.front().lost_host, "node7");
    EXPECT_EQ(got.front().reporter, 1);
  }
  EXPECT_EQ(reports.count(), 0u) << "a rank does not report itself";
}

// A communicator of 4 ranks whose collectives block until the process ends (a peer that never
// answers), listing rank 1 as a process on this node.
class StuckComm final : public Communicator {
 public:
  StuckComm(pid_t peer, bool peers_may_exit,
            std::unique_ptr<dtrain::runtime::PeerAlarm> alarm = nullptr)
      : Communicator(4), may_exit_(peers_may_exit), alarm_(std::move(alarm)) {
    const PeerProcess self = dtrain::runtime::this_process(0, "node7");
    node_ = {self, as_rank(1, peer, self)};
  }
  void broadcast(void*, std::size_t, DType, int) override {}
  void allgather(const void*, void*, std::size_t, DType) override {}
  void barrier() override {}
  std::string_view backend() const override { return "fake"; }
  std::vector<PeerProcess> node_processes() const override { return node_; }
  bool peers_may_exit() const override { return may_exit_; }
  std::unique_ptr<dtrain::runtime::PeerAlarm> take_peer_alarm() override {
    return std::move(alarm_);
  }

 protected:
  void do_allreduce(const void*, void*, std::size_t, DType, ReduceOp) override { block(); }
  void do_reduce_scatter(const void*, void*, std::size_t, DType, ReduceOp) override {}

 private:
  static void block() {
    for (;;) std::this_thread::sleep_for(1h);
  }
  std::vector<PeerProcess> node_;
  bool may_exit_;
  std::unique_ptr<dtrain::runtime::PeerAlarm> alarm_;
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
                                         with_timeout(std::chrono::milliseconds(60'000)));
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

TEST(EnginePeerLoss, AnAlarmFromAnotherNodeFailsTheRunningCollectiveNamingTheLostRank) {
  // This is rank 0 on node7; rank 2 on node2 saw rank 3 there end.
  Child child;
  LoopbackJob job(4, kToken);
  auto engine = std::make_unique<Engine>(
      std::make_unique<StuckComm>(child.pid(), false, job.alarm(0, {2, 3})), 0, 4,
      with_timeout(std::chrono::milliseconds(60'000)));
  testing::internal::CaptureStderr();
  auto stuck = engine->submit("allreduce", 4096, [&] {
    engine->backend().allreduce(nullptr, nullptr, 1024, DType::kFloat32, ReduceOp::kSum);
  });
  std::this_thread::sleep_for(50ms);
  const auto start = std::chrono::steady_clock::now();
  job.send_raw(0, dtrain::runtime::encode_alarm(kToken, {3, "node2", 2}));
  const std::string expected =
      "dtrain: allreduce #0 (4096 bytes, fake, rank 0 of 4): peer process lost: rank 3 (on node2) "
      "was killed or exited without finalizing (seen by rank 2 on that node); this rank's "
      "collectives fail from now on";
  EXPECT_EQ(error_of([&] { engine->wait(*stuck); }), expected);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), expected + "\n");
  engine.reset();
}

TEST(EnginePeerLoss, ARankThatLeftAfterAnErrorIsNamedAsSuch) {
  // This is rank 0 on node7; rank 3 on node2 left the job (its own alarm, Context::abort).
  Child child;
  LoopbackJob job(4, kToken);
  auto engine = std::make_unique<Engine>(
      std::make_unique<StuckComm>(child.pid(), false, job.alarm(0, {1, 2, 3})), 0, 4,
      with_timeout(std::chrono::milliseconds(60'000)));
  testing::internal::CaptureStderr();
  auto stuck = engine->submit("allreduce", 4096, [&] {
    engine->backend().allreduce(nullptr, nullptr, 1024, DType::kFloat32, ReduceOp::kSum);
  });
  std::this_thread::sleep_for(50ms);
  const auto start = std::chrono::steady_clock::now();
  job.send_raw(0, dtrain::runtime::encode_alarm(kToken, {3, "node2", 3}));
  const std::string expected =
      "dtrain: allreduce #0 (4096 bytes, fake, rank 0 of 4): peer process lost: rank 3 (on node2) "
      "left the job after an error, without finalizing (its own output says which); this rank's "
      "collectives fail from now on";
  EXPECT_EQ(error_of([&] { engine->wait(*stuck); }), expected);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), expected + "\n");
  engine.reset();
}

TEST(EnginePeerLoss, APeerEndingJustBeforeThisRanksDeadlineIsLeftToTheTimeout) {
  // Rank 1 hangs; rank 3 (the child here) times out first and exits. Ending 0.7 s into this
  // rank's 1.2 s wait, it most likely timed out too: this rank's own timeout speaks, not a loss.
  Child child;
  auto engine = std::make_unique<Engine>(std::make_unique<StuckComm>(child.pid(), false), 0, 4,
                                         with_timeout(std::chrono::milliseconds(1200)));
  testing::internal::CaptureStderr();
  auto stuck = engine->submit("allreduce", 4096, [&] {
    engine->backend().allreduce(nullptr, nullptr, 1024, DType::kFloat32, ReduceOp::kSum);
  });
  std::this_thread::sleep_for(700ms);
  child.kill_and_reap();
  std::string error;
  try {
    engine->wait(*stuck);
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("not complete after 1.2 s (DTRAIN_TIMEOUT)"), std::string::npos) << error;
  EXPECT_EQ(testing::internal::GetCapturedStderr().find("peer process lost"), std::string::npos);
  engine.reset();
}

TEST(EnginePeerLoss, BetweenCollectivesTheReportSaysWhichCollectiveIsNext) {
  Child child;
  Engine engine(std::make_unique<StuckComm>(child.pid(), false), 0, 4,
                with_timeout(std::chrono::milliseconds(60'000)));
  engine.run("barrier", 0, [] {});
  const std::string report =
      std::string("dtrain: between collectives (fake, rank 0 of 4, next #1): ") + kLost;
  // Nothing may be submitted before the report (it would take #1): wait for the line first. It is
  // one write(2), so it never straddles two captures.
  testing::internal::CaptureStderr();
  child.kill_and_reap();
  std::string err;
  for (int i = 0; i < 500 && err.find(report) == std::string::npos; ++i) {
    std::this_thread::sleep_for(10ms);
    err += testing::internal::GetCapturedStderr();
    testing::internal::CaptureStderr();
  }
  err += testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, report + "\n");
  std::string error;
  try {
    engine.run("barrier", 0, [] {});
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_EQ(error, "dtrain: communicator unusable after an earlier failure: " + report);
}

TEST(EnginePeerLoss, APeerEndingAfterMpiFinalizeIsNoLoss) {
  Child child;
  Engine engine(std::make_unique<StuckComm>(child.pid(), true), 0, 4,
                with_timeout(std::chrono::milliseconds(60'000)));
  testing::internal::CaptureStderr();
  child.kill_and_reap();
  std::this_thread::sleep_for(200ms);
  EXPECT_NO_THROW(engine.run("barrier", 0, [] {}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
