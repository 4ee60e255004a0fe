// The Engine without launcher or peers: collectives numbered in order on the progress thread, a
// backend's error named with its collective, and the deadline: a collective stuck in the backend
// fails at DTRAIN_TIMEOUT, the backend is abandoned, and every later call says the communicator
// is unusable; an interrupted wait (dtrain/interrupt.hpp) gives the communicator up the same way,
// and so does a rank that leaves the job (abort).
// (A lost peer's report is in peer_watch_test.cpp.)
#include "comm/engine.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using dtrain::DType;
using dtrain::Error;
using dtrain::ReduceOp;
using dtrain::runtime::Engine;
using namespace std::chrono_literals;

// Two pretend ranks; an allreduce of a "stuck" backend never returns (a peer that never arrives).
class FakeComm final : public dtrain::runtime::Communicator {
 public:
  // `enforces`: gives up by itself at the deadline, as TCP's sockets do.
  FakeComm(bool stuck, std::shared_ptr<std::atomic<bool>> abandoned, bool enforces = false)
      : Communicator(2), stuck_(stuck), enforces_(enforces), abandoned_(std::move(abandoned)) {}
  void broadcast(void*, std::size_t, DType, int) override {}
  void allgather(const void*, void*, std::size_t, DType) override {}
  void barrier() override { throw Error(Error::Code::kComm, "dtrain: fake: the barrier broke"); }
  std::string_view backend() const override { return "fake"; }
  void abandon() noexcept override { abandoned_->store(true); }
  bool enforces_deadline() const override { return enforces_; }

 protected:
  void do_allreduce(const void*, void*, std::size_t, DType, ReduceOp) override {
    while (stuck_) std::this_thread::sleep_for(1h);  // the thread is detached and left behind
  }
  void do_reduce_scatter(const void*, void*, std::size_t, DType, ReduceOp) override {}

 private:
  bool stuck_;
  bool enforces_;
  std::shared_ptr<std::atomic<bool>> abandoned_;
};

dtrain::runtime::Settings with_timeout(std::chrono::milliseconds timeout) {
  dtrain::runtime::Settings s;
  s.timeout = timeout;
  return s;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Engine, CollectivesRunInOrderAndAreNumbered) {
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  Engine engine(std::make_unique<FakeComm>(false, abandoned), 0, 2, with_timeout(60s));
  ASSERT_TRUE(engine.threaded());
  std::vector<int> order;
  std::vector<std::shared_ptr<dtrain::runtime::Pending>> pending;
  for (int i = 0; i < 5; ++i) {
    pending.push_back(engine.submit("allreduce", 4, [&order, i] { order.push_back(i); }));
  }
  for (auto& p : pending) engine.wait(*p);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(pending.back()->seq, 4u);
  EXPECT_EQ(engine.next_sequence(), 5u);
}

TEST(Engine, ABackendErrorNamesItsCollective) {
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  Engine engine(std::make_unique<FakeComm>(false, abandoned), 1, 2, with_timeout(60s));
  engine.run("allreduce", 8, [] {});
  EXPECT_EQ(error_of([&] { engine.run("barrier", 0, [&] { engine.backend().barrier(); }); }),
            "dtrain: barrier #1 (0 bytes, rank 1 of 2): fake: the barrier broke");
  EXPECT_FALSE(abandoned->load()) << "an error is not a timeout: the backend stays usable";
  engine.run("allreduce", 8, [] {});
}

// The heartbeats' view (issue 22, item 24): every enter and exit, and whether the exit was a
// failure.
class Recorder final : public dtrain::runtime::CollectiveObserver {
 public:
  void on_collective(std::uint64_t seq, const char* op, std::size_t, bool enter,
                     bool failed) noexcept override {
    std::lock_guard lock(mutex);
    seen.push_back(std::string(op) + " #" + std::to_string(seq) + (enter ? " enter" : " exit") +
                   (failed ? " failed" : ""));
  }
  std::vector<std::string> events() {
    std::lock_guard lock(mutex);
    return seen;
  }

 private:
  std::mutex mutex;
  std::vector<std::string> seen;
};

TEST(Engine, AFailedCollectiveIsRecordedAsFailedNotAsANormalExit) {
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  Engine engine(std::make_unique<FakeComm>(false, abandoned), 1, 2, with_timeout(60s));
  auto recorder = std::make_shared<Recorder>();
  engine.set_observer(recorder);
  engine.run("allreduce", 8, [] {});
  (void)error_of([&] { engine.run("barrier", 0, [&] { engine.backend().barrier(); }); });
  EXPECT_EQ(recorder->events(),
            (std::vector<std::string>{"allreduce #0 enter", "allreduce #0 exit", "barrier #1 enter",
                                      "barrier #1 exit failed"}));
}

TEST(Engine, AStuckCollectiveIsRecordedAsFailedAtItsDeadline) {
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  auto engine = std::make_unique<Engine>(std::make_unique<FakeComm>(true, abandoned), 0, 2,
                                         with_timeout(300ms));
  auto recorder = std::make_shared<Recorder>();
  engine->set_observer(recorder);
  float x = 1;
  (void)error_of([&] {
    engine->run("allreduce", 4,
                [&] { engine->backend().allreduce(&x, &x, 1, DType::kFloat32, ReduceOp::kSum); });
  });
  EXPECT_EQ(recorder->events(),
            (std::vector<std::string>{"allreduce #0 enter", "allreduce #0 exit failed"}));
  engine.reset();
}

TEST(Engine, AStuckCollectiveFailsAtTheDeadlineAndTheBackendIsAbandoned) {
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  auto engine = std::make_unique<Engine>(std::make_unique<FakeComm>(true, abandoned), 0, 2,
                                         with_timeout(300ms));
  float x = 1;
  const auto start = std::chrono::steady_clock::now();
  const std::string error = error_of([&] {
    engine->run("allreduce", 4,
                [&] { engine->backend().allreduce(&x, &x, 1, DType::kFloat32, ReduceOp::kSum); });
  });
  const auto took = std::chrono::steady_clock::now() - start;
  const std::string timeout =
      "dtrain: allreduce #0 (4 bytes, fake, rank 0 of 2): not complete after 0.3 s "
      "(DTRAIN_TIMEOUT); missing ranks: unknown (fake does not say which ranks have not arrived; "
      "compare the ranks' last \"coll\" records in rank-NNNNN.jsonl); expected every rank to "
      "enter the same collective (a rank died, hangs or called a different collective)";
  EXPECT_EQ(error, timeout);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 10s);
  EXPECT_TRUE(abandoned->load()) << "a stuck backend must not be finalized";
  EXPECT_EQ(error_of([&] { engine->run("barrier", 0, [] {}); }),
            "dtrain: communicator unusable after an earlier failure: " + timeout);
  engine.reset();  // leaves the stuck thread behind instead of joining it
}

// The gate alone: a thread inside a body when the Engine goes is orphaned (leave() says so); one
// outside is joined, and the closed gate lets it start no body.
TEST(BodyGate, AThreadInsideIsOrphanedAndOneOutsideStartsNothing) {
  dtrain::runtime::BodyGate inside;
  EXPECT_TRUE(inside.enter());
  EXPECT_TRUE(inside.orphan_if_inside());
  EXPECT_FALSE(inside.leave());
  dtrain::runtime::BodyGate outside;
  EXPECT_TRUE(outside.enter());
  EXPECT_TRUE(outside.leave());
  EXPECT_FALSE(outside.orphan_if_inside());
  EXPECT_FALSE(outside.enter());
}

// A backend whose allreduce waits until `release` is set, then fails as a closed socket makes it
// fail; `touched` records any later call into it (the Engine leaks it when the call is stuck).
class ReleasedComm final : public dtrain::runtime::Communicator {
 public:
  ReleasedComm(std::shared_ptr<std::atomic<bool>> release,
               std::shared_ptr<std::atomic<bool>> touched)
      : Communicator(2), release_(std::move(release)), touched_(std::move(touched)) {}
  void broadcast(void*, std::size_t, DType, int) override {}
  void allgather(const void*, void*, std::size_t, DType) override {}
  void barrier() override {}
  std::string_view backend() const override {
    if (release_->load()) touched_->store(true);
    return "fake";
  }
  const dtrain::runtime::MessageSpace& message_space() const override {
    if (release_->load()) touched_->store(true);
    return Communicator::message_space();
  }

 protected:
  void do_allreduce(const void*, void*, std::size_t, DType, ReduceOp) override {
    while (!release_->load()) std::this_thread::sleep_for(1ms);
    throw Error(Error::Code::kComm, "dtrain: fake: the peer closed its connection");
  }
  void do_reduce_scatter(const void*, void*, std::size_t, DType, ReduceOp) override {}

 private:
  std::shared_ptr<std::atomic<bool>> release_;
  std::shared_ptr<std::atomic<bool>> touched_;
};

// The Engine destroyed while its thread is stuck in the backend leaves the thread behind; when the
// call returns after all (a peer's exit closed the socket it waited on), the thread must touch
// nothing of the Engine: before BodyGate it named the call through the freed Engine's released
// backend and crashed the process at exit (torch_tcp_timeout, exit status 139).
TEST(Engine, AThreadLeftInTheBackendTouchesNothingOfTheEngineWhenItsCallReturns) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto touched = std::make_shared<std::atomic<bool>>(false);
  auto engine = std::make_unique<Engine>(std::make_unique<ReleasedComm>(release, touched), 0, 2,
                                         with_timeout(200ms));
  float x = 1;
  const std::string error = error_of([&] {
    engine->run("allreduce", 4,
                [&] { engine->backend().allreduce(&x, &x, 1, DType::kFloat32, ReduceOp::kSum); });
  });
  EXPECT_NE(error.find("not complete after 0.2 s"), std::string::npos) << error;
  engine.reset();        // the thread is inside the backend: detached, the backend leaked
  release->store(true);  // the call returns into an Engine that is gone
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(touched->load()) << "the thread called the backend after the Engine was destroyed";
}

// A backend that enforces its own deadline (TCP) gets a grace before the Engine's message, except
// for a collective that only polls (TCP's shared-memory allreduce): nothing else would stop it, and
// the message says DTRAIN_TIMEOUT, so it must fail then, not 2 s later.
TEST(Engine, APollingCollectiveFailsAtTheDeadlineItStates) {
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  auto engine = std::make_unique<Engine>(std::make_unique<FakeComm>(true, abandoned, true), 0, 2,
                                         with_timeout(300ms));
  float x = 1;
  const auto start = std::chrono::steady_clock::now();
  const std::string error = error_of([&] {
    engine->run(
        "allreduce", 4,
        [&] { engine->backend().allreduce(&x, &x, 1, DType::kFloat32, ReduceOp::kSum); }, true);
  });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_NE(error.find("not complete after 0.3 s (DTRAIN_TIMEOUT)"), std::string::npos) << error;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 1500ms) << "the grace for backends that time out by themselves was added";
  engine.reset();  // leaves the stuck thread behind instead of joining it
}

// A deadline the communicator's maker gave (torch's group timeout) is named as that, not as
// DTRAIN_TIMEOUT, with " timeout " in the text as torch's barrier tests look for it.
TEST(Engine, ACallersTimeoutIsNamedAsTheGroups) {
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  dtrain::runtime::Settings settings = with_timeout(300ms);
  settings.timeout_source = dtrain::runtime::TimeoutSource::kCaller;
  auto engine =
      std::make_unique<Engine>(std::make_unique<FakeComm>(true, abandoned, true), 0, 2, settings);
  float x = 1;
  const std::string error = error_of([&] {
    engine->run(
        "allreduce", 4,
        [&] { engine->backend().allreduce(&x, &x, 1, DType::kFloat32, ReduceOp::kSum); }, true);
  });
  EXPECT_NE(error.find(": not complete after 0.3 s (the timeout given for this group, not "
                       "DTRAIN_TIMEOUT); missing ranks: "),
            std::string::npos)
      << error;
  engine.reset();  // leaves the stuck thread behind instead of joining it
}

// A binding's interrupt check (Python's Ctrl-C) abandons a wait on a collective that waits for a
// peer, long before the deadline: its exception reaches the caller, the backend is abandoned, a
// collective queued behind never runs (its caller may have freed its buffers), and later ones
// say the communicator is unusable.
TEST(Engine, AnInterruptedWaitIsAbandonedAndTheCommunicatorGivenUp) {
  struct Interrupt {};
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  Engine engine(std::make_unique<FakeComm>(false, abandoned), 0, 2, with_timeout(600s));
  std::atomic<int> checks{0};
  engine.set_interrupt_check([&checks] {
    if (++checks == 3) throw Interrupt{};
  });
  std::atomic<bool> peer_arrived{false};
  auto waiting = engine.submit("allreduce", 4, [&peer_arrived] {
    while (!peer_arrived.load()) std::this_thread::sleep_for(1ms);
  });
  std::atomic<bool> ran_after{false};
  auto queued = engine.submit("broadcast", 4, [&ran_after] { ran_after = true; });
  EXPECT_THROW(engine.wait(*waiting), Interrupt);
  EXPECT_EQ(checks.load(), 3) << "the wait ended at the check that threw";
  EXPECT_TRUE(abandoned->load()) << "a collective left in the backend must not be finalized";
  engine.set_interrupt_check({});
  peer_arrived = true;
  const std::string unusable =
      "dtrain: communicator unusable after an earlier failure: dtrain: allreduce #0 (4 bytes, "
      "fake, rank 0 of 2): interrupted while waiting for the other ranks; a collective cannot be "
      "cancelled, so this communicator is unusable from now on";
  EXPECT_EQ(error_of([&] { engine.wait(*queued); }), unusable);
  EXPECT_FALSE(ran_after.load()) << "a collective queued behind the interrupted one ran";
  EXPECT_EQ(error_of([&] { engine.run("barrier", 0, [] {}); }), unusable);
}

}  // namespace

// A rank leaving the job after an error (Context::abort): its line goes to stderr, the backend is
// abandoned (no collective teardown), and later collectives fail with that line; a second call
// writes nothing.
TEST(Engine, AnAbortAbandonsTheBackendAndFailsLaterCollectives) {
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  Engine engine(std::make_unique<FakeComm>(false, abandoned), 1, 2, with_timeout(60s));
  engine.run("allreduce", 8, [] {});
  testing::internal::CaptureStderr();
  engine.abort("dtrain: rank 1 of 2 (on vm): leaving the job: a test");
  engine.abort("dtrain: rank 1 of 2 (on vm): leaving the job: again");
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "dtrain: rank 1 of 2 (on vm): leaving the job: a test\n");
  EXPECT_TRUE(abandoned->load()) << "a rank that leaves must not finalize MPI";
  EXPECT_EQ(error_of([&] { engine.run("allreduce", 8, [] {}); }),
            "dtrain: communicator unusable after an earlier failure: dtrain: rank 1 of 2 (on vm): "
            "leaving the job: a test");
}
