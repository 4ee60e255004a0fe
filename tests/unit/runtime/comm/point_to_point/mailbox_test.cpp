// Point-to-point messages through the public Comm (send, recv, isend, irecv) on the TCP backend,
// ranks as threads over the in-memory store, and on one process: contents of every size, the
// order of one pair's messages per tag, any-source receives, both stages sending first (the
// pipeline case), messages kept before their receive (and those held back above the budget),
// size mismatches, closed peers and deadlines named.
#include "comm/point_to_point/mailbox.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.hpp"
#include "comm/engine.hpp"
#include "comm/single_communicator.hpp"
#include "error_text.hpp"
#include "tcp_test_ranks.hpp"
#include "threads_as_ranks.hpp"

namespace {

using dtrain::Comm;
using dtrain::DType;
using dtrain::Error;
using dtrain::runtime::Engine;
using dtrain::test::connect;
using dtrain::test::settings;
using dtrain::test::threads_as_ranks;

using dtrain::test::error_of;

void tcp_ranks(int size, const std::function<void(Comm&, int rank)>& body,
               std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  dtrain::test::tcp_comm_ranks(size, body, timeout);
}

std::vector<std::int32_t> pattern(std::size_t n, int seed) {
  std::vector<std::int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(i * 7 + seed);
  return v;
}

TEST(PointToPoint, MessagesOfEverySizeArriveWhole) {
  const std::vector<std::size_t> counts = {0, 1, 7, 4096, (std::size_t{8} << 20) / 4};
  tcp_ranks(2, [&](Comm& c, int rank) {
    for (std::size_t i = 0; i < counts.size(); ++i) {
      if (rank == 0) {
        const auto data = pattern(counts[i], static_cast<int>(i));
        c.send<std::int32_t>(data, 1, 3);
      } else {
        std::vector<std::int32_t> got(counts[i], -1);
        EXPECT_EQ(c.recv<std::int32_t>(std::span<std::int32_t>(got), 0, 3), 0);
        EXPECT_EQ(got, pattern(counts[i], static_cast<int>(i))) << counts[i] << " elements";
      }
    }
  });
}

// 1F1B's exchange: both ranks send a message larger than the sockets' buffers before either
// receives. With sends that waited for their receiver, each would wait for the other.
TEST(PointToPoint, BothRanksSendingFirstDoNotWaitForEachOther) {
  const std::size_t n = (std::size_t{32} << 20) / 4;
  tcp_ranks(2, [&](Comm& c, int rank) {
    const auto mine = pattern(n, rank);
    std::vector<std::int32_t> theirs(n);
    dtrain::Work s = c.isend(mine.data(), n, DType::kInt32, 1 - rank, 0);
    dtrain::Work r = c.irecv(theirs.data(), n, DType::kInt32, 1 - rank, 0);
    s.wait();
    r.wait();
    EXPECT_EQ(r.source(), 1 - rank);
    EXPECT_EQ(s.source(), -1);
    EXPECT_TRUE(theirs == pattern(n, 1 - rank));
  });
}

// Messages of one pair with one tag arrive in the order sent, whatever the receiver takes
// first; another tag overtakes them.
TEST(PointToPoint, OnePairsMessagesWithOneTagKeepTheirOrder) {
  constexpr int kEach = 50;
  tcp_ranks(2, [&](Comm& c, int rank) {
    if (rank == 0) {
      for (std::int32_t i = 0; i < kEach; ++i) {
        c.send<std::int32_t>(std::vector<std::int32_t>{i}, 1, 0);
        c.send<std::int32_t>(std::vector<std::int32_t>{1000 + i}, 1, 1);
      }
      return;
    }
    std::vector<std::int32_t> v(1);
    for (std::int32_t i = 0; i < kEach; ++i) {
      c.recv<std::int32_t>(std::span<std::int32_t>(v), 0, 1);
      EXPECT_EQ(v[0], 1000 + i);
    }
    for (std::int32_t i = 0; i < kEach; ++i) {
      c.recv<std::int32_t>(std::span<std::int32_t>(v), 0, 0);
      EXPECT_EQ(v[0], i);
    }
  });
}

TEST(PointToPoint, AnySourceReceivesTellTheSender) {
  tcp_ranks(4, [&](Comm& c, int rank) {
    if (rank != 0) {
      c.send<std::int64_t>(std::vector<std::int64_t>{100 + rank, rank}, 0, 9);
      return;
    }
    std::set<int> senders;
    for (int i = 0; i < 3; ++i) {
      std::vector<std::int64_t> got(2);
      const int from = c.recv<std::int64_t>(std::span<std::int64_t>(got), Comm::kAnySource, 9);
      EXPECT_EQ(got, (std::vector<std::int64_t>{100 + from, from}));
      senders.insert(from);
    }
    EXPECT_EQ(senders, (std::set<int>{1, 2, 3}));
  });
}

// A message larger than what the mailbox keeps for receives not yet posted: its connection is
// held back until the receive comes, and the bytes still arrive whole; a small one behind it on
// another connection is not held up.
TEST(PointToPoint, AMessageAboveTheKeptBudgetWaitsForItsReceive) {
  const std::size_t n = (dtrain::runtime::Mailbox::kUnexpectedBudget + (std::size_t{8} << 20)) / 4;
  tcp_ranks(3, [&](Comm& c, int rank) {
    if (rank == 0) {
      c.send(pattern(n, 5).data(), n, DType::kInt32, 2, 0);
    } else if (rank == 1) {
      c.send<std::int32_t>(std::vector<std::int32_t>{42}, 2, 0);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both sent meanwhile
      std::vector<std::int32_t> small(1);
      EXPECT_EQ(c.recv<std::int32_t>(std::span<std::int32_t>(small), 1, 0), 1);
      EXPECT_EQ(small[0], 42);
      std::vector<std::int32_t> big(n);
      EXPECT_EQ(c.recv<std::int32_t>(std::span<std::int32_t>(big), 0, 0), 0);
      EXPECT_TRUE(big == pattern(n, 5));
    }
  });
}

TEST(PointToPoint, ASizeMismatchNamesBothSizesAndBothRanks) {
  tcp_ranks(2, [&](Comm& c, int rank) {
    if (rank == 0) {
      c.send<std::int32_t>(std::vector<std::int32_t>{1, 2, 3, 4}, 1, 0);
      c.send<std::int32_t>(std::vector<std::int32_t>{5}, 1, 0);
      return;
    }
    std::vector<std::int32_t> two(2);
    const std::string e = error_of([&] { c.recv<std::int32_t>(std::span<std::int32_t>(two), 0); });
    EXPECT_NE(e.find("recv from rank 0"), std::string::npos) << e;
    EXPECT_NE(e.find("8 bytes; rank 1 of 2"), std::string::npos) << e;
    EXPECT_NE(e.find("sent 16 bytes; expected a message of the receive's size"), std::string::npos)
        << e;
    // The mismatched message is consumed; the next one arrives intact.
    std::vector<std::int32_t> one(1);
    c.recv<std::int32_t>(std::span<std::int32_t>(one), 0);
    EXPECT_EQ(one[0], 5);
  });
}

TEST(PointToPoint, APeerThatLeavesFailsTheReceivesItOwedNamingIt) {
  auto store = dtrain::runtime::make_memory_store();
  threads_as_ranks(2, [&](int rank) {
    dtrain::runtime::PrefixStore tcp(store, "tcp");
    auto engine = std::make_unique<Engine>(
        dtrain::runtime::make_tcp_communicator(tcp, rank, 2, settings(false)), rank, 2,
        settings(false));
    Comm c(*engine);
    std::vector<std::int32_t> v(1);
    if (rank == 0) {
      c.send<std::int32_t>(std::vector<std::int32_t>{7}, 1, 0);
      engine.reset();  // leaves after one message
      return;
    }
    c.recv<std::int32_t>(std::span<std::int32_t>(v), 0, 0);
    EXPECT_EQ(v[0], 7);
    const auto began = std::chrono::steady_clock::now();
    const std::string e = error_of([&] { c.recv<std::int32_t>(std::span<std::int32_t>(v), 0, 0); });
    EXPECT_NE(e.find("recv from rank 0 (on "), std::string::npos) << e;
    EXPECT_NE(e.find("closed its connection"), std::string::npos) << e;
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(10));
  });
}

// A rank that leaves (its communicator destroyed, as a killed process's sockets close) having
// never sent to this one: a receive from it had no connection to see close, and waited for its
// deadline. `leave_after`: how long the leaving rank stays; `waits`: it has a receive of its own
// posted, so its mailbox's thread has accepted the connection the waiting receive opens to it.
// Returns the waiting receive's error, or a note that it took too long.
std::string receive_from_a_rank_that_leaves(std::chrono::milliseconds leave_after, bool waits) {
  auto store = dtrain::runtime::make_memory_store();
  std::string error;
  threads_as_ranks(2, [&](int rank) {
    dtrain::runtime::Settings s = settings(false);
    s.timeout = std::chrono::seconds(20);
    dtrain::runtime::PrefixStore tcp(store, "tcp");
    auto engine = std::make_unique<Engine>(dtrain::runtime::make_tcp_communicator(tcp, rank, 2, s),
                                           rank, 2, s);
    Comm c(*engine);
    std::vector<std::int32_t> v(1);
    if (rank == 1) {
      dtrain::Work w;
      if (waits) w = c.irecv(v.data(), 1, DType::kInt32, 0, 9);
      std::this_thread::sleep_for(leave_after);
      engine.reset();  // leaves without a message to rank 0
      return;
    }
    const auto began = std::chrono::steady_clock::now();
    error = error_of([&] { c.recv<std::int32_t>(std::span<std::int32_t>(v), 1, 0); });
    if (std::chrono::steady_clock::now() - began > std::chrono::seconds(5)) {
      error = "took more than 5 s (the deadline is 20 s): " + error;
    }
  });
  return error;
}

// Gone before the receive looks: its listener refuses the connection.
TEST(PointToPoint, AReceiveFromARankThatLeftWithoutSendingFailsNamingIt) {
  const std::string e = receive_from_a_rank_that_leaves(std::chrono::milliseconds(0), false);
  const std::string h = dtrain::test::host_name();
  EXPECT_EQ(e.substr(0, e.find(" at ")), "dtrain: recv from rank 1 (on " + h +
                                             ") (tag 0, 4 bytes; rank 0 of 2): rank 1 (on " + h +
                                             "): could not connect to its listener")
      << e;
  EXPECT_NE(e.find("(refused: its process ended?)"), std::string::npos) << e;
}

// Gone after the receive connected: the connection closes, accepted by its mailbox or not. Which
// of this rank's two connections with it sees the end first is the scheduler's choice (the full
// run on a loaded machine saw the incoming one): either names rank 1 and why.
TEST(PointToPoint, AReceiveFromARankThatLeavesLaterFailsNamingIt) {
  const std::string h = dtrain::test::host_name();
  const std::string call =
      "dtrain: recv from rank 1 (on " + h + ") (tag 0, 4 bytes; rank 0 of 2): ";
  const std::string outgoing =
      call + "rank 1 (on " + h + "): its connection closed (its process ended?)";
  const std::string incoming = call + "rank 1 (on " + h +
                               ") closed its connection (its communicator was destroyed or its "
                               "process ended) before sending a message this receive waits for";
  for (const bool waits : {false, true}) {
    const std::string e = receive_from_a_rank_that_leaves(std::chrono::milliseconds(1500), waits);
    EXPECT_TRUE(e == outgoing || e == incoming)
        << e << "\n("
        << (waits ? "its mailbox accepted the connection" : "the connection was never accepted")
        << ")";
  }
}

// An alltoallv's pattern: a receive from a rank, then a send to it that finds it gone. The send
// failed at once, and the receive, with a connection to that rank already made (the send's),
// waited for its deadline.
TEST(PointToPoint, ASendThatFindsItsPeerGoneFailsTheReceivesFromIt) {
  auto store = dtrain::runtime::make_memory_store();
  threads_as_ranks(2, [&](int rank) {
    dtrain::runtime::Settings s = settings(false);
    s.timeout = std::chrono::seconds(20);
    dtrain::runtime::PrefixStore tcp(store, "tcp");
    auto engine = std::make_unique<Engine>(dtrain::runtime::make_tcp_communicator(tcp, rank, 2, s),
                                           rank, 2, s);
    Comm c(*engine);
    if (rank == 1) {
      engine.reset();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 1 has left
    const auto began = std::chrono::steady_clock::now();
    std::vector<std::int32_t> in(1);
    const std::vector<std::int32_t> out{1};
    dtrain::Work r = c.irecv(in.data(), 1, DType::kInt32, 1, 0);
    const std::string sent = error_of([&] { c.send<std::int32_t>(out, 1, 0); });
    const std::string received = error_of([&] { r.wait(); });
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));
    EXPECT_NE(sent.find("send to rank 1 (on "), std::string::npos) << sent;
    EXPECT_NE(received.find("recv from rank 1 (on "), std::string::npos) << received;
    // The receive is told what the send found.
    const auto why = [](const std::string& e) {
      const std::size_t at = e.find("): rank 1 ");
      return at == std::string::npos ? "(none in: " + e + ")" : e.substr(at);
    };
    EXPECT_EQ(why(received), why(sent));
  });
}

TEST(PointToPoint, AReceiveNobodySendsToPassesItsDeadlineNamed) {
  tcp_ranks(
      2,
      [&](Comm& c, int rank) {
        if (rank == 0) {
          std::vector<float> v(3);
          const std::string e = error_of([&] { c.recv(v.data(), 3, DType::kFloat32, 1, 4); });
          EXPECT_NE(e.find("recv from rank 1 (on "), std::string::npos) << e;
          EXPECT_NE(e.find("(tag 4, 12 bytes; rank 0 of 2): no message within 0.4 s "
                           "(DTRAIN_TIMEOUT); expected rank 1"),
                    std::string::npos)
              << e;
        }
        // A message sent after the receive gave up goes to the next receive for it.
        if (rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(600));
          c.send<float>(std::vector<float>{1, 2, 3}, 0, 4);
        } else {
          std::vector<float> v(3);
          c.recv<float>(std::span<float>(v), 1, 4);
          EXPECT_EQ(v, (std::vector<float>{1, 2, 3}));
        }
      },
      std::chrono::milliseconds(400));
}

TEST(PointToPoint, BadRanksAndTagsAreRefusedByName) {
  tcp_ranks(2, [&](Comm& c, int) {
    std::vector<float> v(1);
    EXPECT_EQ(error_of([&] { c.send(v.data(), 1, DType::kFloat32, 2, 0); }),
              "dtrain: send: destination rank out of range; expected 0 to 1, got 2");
    EXPECT_EQ(error_of([&] { c.recv(v.data(), 1, DType::kFloat32, -2, 0); }),
              "dtrain: recv: source rank out of range; expected 0 to 1 or kAnySource (-1), got -2");
    EXPECT_EQ(error_of([&] { c.send(v.data(), 1, DType::kFloat32, 1, -1); }),
              "dtrain: send: tag; expected 0 or more, got -1");
    EXPECT_EQ(error_of([&] { c.send(nullptr, 1, DType::kFloat32, 1, 0); }),
              "dtrain: send: data buffer; expected a pointer to 1 elements, got null");
  });
}

// One process: a message to itself is kept until its receive, in order per tag.
TEST(PointToPoint, OneRankSendsToItself) {
  // The messages' deadline is the engine's (its settings'), as the communicator's is.
  dtrain::runtime::Settings s = settings(false);
  s.timeout = std::chrono::milliseconds(300);
  Engine engine(dtrain::runtime::make_single_communicator(s.timeout), 0, 1, s);
  Comm c(engine);
  c.send<double>(std::vector<double>{1.5}, 0, 0);
  c.send<double>(std::vector<double>{2.5}, 0, 0);
  std::vector<double> v(1);
  dtrain::Work w = c.irecv(v.data(), 1, DType::kFloat64, Comm::kAnySource, 0);
  w.wait();
  EXPECT_EQ(w.source(), 0);
  EXPECT_EQ(v[0], 1.5);
  c.recv<double>(std::span<double>(v), 0, 0);
  EXPECT_EQ(v[0], 2.5);
  const std::string e = error_of([&] { c.recv<double>(std::span<double>(v), 0, 0); });
  EXPECT_NE(e.find("no message within 0.3 s"), std::string::npos) << e;
}

}  // namespace
