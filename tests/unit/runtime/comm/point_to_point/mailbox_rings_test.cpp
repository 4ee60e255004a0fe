// Point-to-point messages within a node (the shared-memory rings, mailbox_rings.cpp) and across
// nodes (the sockets) give the user the same: each test runs on both, ranks as threads of this
// process over the TCP backend, on one node or each on its own. Sizes around and above the
// ring's, the order per pair and tag, any source over many pairs, size mismatches, and a peer
// that goes in the middle of a message, named.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <latch>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.hpp"
#include "comm/engine.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "comm/transport/shm/shm_ring.hpp"
#include "error_text.hpp"
#include "tcp_test_ranks.hpp"
#include "threads_as_ranks.hpp"

namespace {

using dtrain::Comm;
using dtrain::DType;
using dtrain::runtime::Engine;
using dtrain::runtime::Mailbox;
using dtrain::runtime::ShmRing;
using dtrain::test::error_of;

// Each rank's engine, on one node (`one_node`) or on a node of its own.
std::unique_ptr<Engine> engine_for(const std::shared_ptr<dtrain::runtime::Store>& store,
                                   bool one_node, int rank, int size,
                                   std::chrono::milliseconds timeout) {
  dtrain::runtime::Settings s = dtrain::test::settings(false);
  s.timeout = timeout;
  s.shm_messages = true;  // DTRAIN_SHM_MESSAGES=1: the rings, where ranks share a node
  dtrain::runtime::PrefixStore tcp(store, "tcp");
  const std::string node = one_node ? "node" : "node" + std::to_string(rank);
  return std::make_unique<Engine>(dtrain::runtime::make_tcp_communicator(tcp, rank, size, s, node),
                                  rank, size, s);
}

class Paths : public testing::TestWithParam<bool> {
 protected:
  void ranks(int size, const std::function<void(Comm&, int rank)>& body,
             std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    auto store = dtrain::runtime::make_memory_store();
    dtrain::test::threads_as_ranks(size, [&](int rank) {
      auto engine = engine_for(store, GetParam(), rank, size, timeout);
      Comm comm(*engine);
      body(comm, rank);
    });
  }
};

std::vector<std::uint8_t> bytes_of(std::size_t n, int seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 31 + seed) % 253);
  return v;
}

TEST_P(Paths, MessagesAroundAndAboveTheRingsSizeArriveWhole) {
  const std::vector<std::size_t> sizes = {0,
                                          1,
                                          7,
                                          ShmRing::kBytes - 16,  // header and payload fill it
                                          ShmRing::kBytes - 15,
                                          ShmRing::kBytes + 1,
                                          (std::size_t{3} << 20) + 5};
  ranks(2, [&](Comm& c, int rank) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (rank == 0) {
        c.send(bytes_of(sizes[i], static_cast<int>(i)).data(), sizes[i], DType::kUInt8, 1, 2);
      } else {
        std::vector<std::uint8_t> got(sizes[i], 0xff);
        EXPECT_EQ(c.recv(got.data(), sizes[i], DType::kUInt8, 0, 2), 0);
        EXPECT_TRUE(got == bytes_of(sizes[i], static_cast<int>(i))) << sizes[i] << " bytes";
      }
    }
  });
}

// Two tags interleaved, some messages above the ring's size, the later tag taken first: each
// tag's messages come in the order sent.
TEST_P(Paths, OnePairsMessagesKeepTheirOrderPerTag) {
  constexpr int kEach = 40;
  auto size_of = [](int i) { return i % 5 == 0 ? ShmRing::kBytes * 2 + 3 : std::size_t(9 + i); };
  ranks(2, [&](Comm& c, int rank) {
    if (rank == 0) {
      for (int i = 0; i < kEach; ++i) {
        for (int tag : {1, 2}) {
          c.send(bytes_of(size_of(i), i * 2 + tag).data(), size_of(i), DType::kUInt8, 1, tag);
        }
      }
      return;
    }
    for (int tag : {2, 1}) {
      for (int i = 0; i < kEach; ++i) {
        std::vector<std::uint8_t> got(size_of(i));
        c.recv(got.data(), got.size(), DType::kUInt8, 0, tag);
        EXPECT_TRUE(got == bytes_of(size_of(i), i * 2 + tag)) << "tag " << tag << " #" << i;
      }
    }
  });
}

// More ranks on one node than it has cores: a message larger than a ring is read from its sender's
// memory (Mailbox::cores_for_all_; with a core each it streams through the ring, which the tests
// above take), whole, with its receive on time or late (then it waits in the sender's memory,
// and is kept after Mailbox::kParkFor).
TEST(PointToPointSharedMemory, MoreRanksThanCoresReadLargeMessagesFromTheSendersMemory) {
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (cores > 7) {
    GTEST_SKIP() << "needs more ranks on one node than its cores; this machine has " << cores
                 << ", and this test runs at most 8 ranks";
  }
  const int size = static_cast<int>(cores) + 1;
  const std::size_t n = (std::size_t{1} << 20) + 3;
  auto store = dtrain::runtime::make_memory_store();
  dtrain::test::threads_as_ranks(size, [&](int rank) {
    auto engine = engine_for(store, true, rank, size, std::chrono::seconds(30));
    Comm c(*engine);
    const int next = (rank + 1) % size;
    const int prev = (rank + size - 1) % size;
    for (int late = 0; late < 2; ++late) {
      const std::vector<std::uint8_t> mine = bytes_of(n, rank * 2 + late);
      dtrain::Work sent = c.isend(mine.data(), n, DType::kUInt8, next, late);
      if (late == 1) std::this_thread::sleep_for(Mailbox::kParkFor * 3);
      std::vector<std::uint8_t> got(n, 0);
      EXPECT_EQ(c.recv(got.data(), n, DType::kUInt8, prev, late), prev);
      sent.wait();
      EXPECT_TRUE(got == bytes_of(n, prev * 2 + late)) << "rank " << rank << ", late " << late;
    }
  });
}

// Messages that all come before their receives, of sizes that grow and shrink across a kept
// buffer's (Mailbox::kSpareBytes), arrive whole and in order: the buffers kept and used again
// for later messages hold no byte of an earlier one.
TEST_P(Paths, AStreamAheadOfItsReceivesArrivesWholeAndInOrder) {
  constexpr int kMessages = 3000;
  auto size_of = [](int i) { return static_cast<std::size_t>((i * 37) % 6000); };
  ranks(2, [&](Comm& c, int rank) {
    std::uint8_t last = 0;
    if (rank == 0) {
      for (int i = 0; i < kMessages; ++i) {
        c.send(bytes_of(size_of(i), i).data(), size_of(i), DType::kUInt8, 1, 3);
      }
      c.send(&last, 1, DType::kUInt8, 1, 4);
      return;
    }
    // A receive of another tag first: the mailbox reads (and keeps) what comes from then on, as
    // MPI progresses eager messages. The stream's receives come well after its messages.
    dtrain::Work after = c.irecv(&last, 1, DType::kUInt8, 0, 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (int i = 0; i < kMessages; ++i) {
      std::vector<std::uint8_t> got(size_of(i), 0xff);
      c.recv(got.data(), got.size(), DType::kUInt8, 0, 3);
      ASSERT_TRUE(got == bytes_of(size_of(i), i)) << "#" << i << ", " << size_of(i) << " bytes";
    }
    after.wait();
  });
}

// Every rank sends to every other (30 pairs, each its ring when on one node); each receives from
// any source and is told who sent, each sender's messages in order.
TEST_P(Paths, AnySourceOverManyPairsTellsEachSender) {
  constexpr int kSize = 6;
  constexpr int kEach = 3;
  ranks(kSize, [&](Comm& c, int rank) {
    std::vector<dtrain::Work> sends;
    std::vector<std::vector<std::int32_t>> out;
    for (int to = 0; to < kSize; ++to) {
      if (to == rank) continue;
      for (int i = 0; i < kEach; ++i) out.push_back({rank, i, to});
    }
    for (const auto& m : out) sends.push_back(c.isend(m.data(), 3, DType::kInt32, m[2], 0));
    std::map<int, int> next;  // by sender: the number of its next message
    for (int k = 0; k < (kSize - 1) * kEach; ++k) {
      std::vector<std::int32_t> got(3);
      const int from = c.recv(got.data(), 3, DType::kInt32, Comm::kAnySource, 0);
      EXPECT_EQ(got[0], from);
      EXPECT_EQ(got[1], next[from]++) << "from rank " << from;
      EXPECT_EQ(got[2], rank);
    }
    for (auto& s : sends) s.wait();
    EXPECT_EQ(next.size(), static_cast<std::size_t>(kSize - 1));
  });
}

TEST_P(Paths, ASizeMismatchNamesBothSizesAndBothRanksAndTheNextMessageArrives) {
  ranks(2, [&](Comm& c, int rank) {
    if (rank == 0) {
      c.send(bytes_of(ShmRing::kBytes + 8, 1).data(), ShmRing::kBytes + 8, DType::kUInt8, 1, 0);
      c.send(bytes_of(5, 2).data(), 5, DType::kUInt8, 1, 0);
      return;
    }
    std::vector<std::uint8_t> small(8);
    const std::string e = error_of([&] { c.recv(small.data(), 8, DType::kUInt8, 0, 0); });
    EXPECT_NE(e.find("recv from rank 0 (on node"), std::string::npos) << e;
    EXPECT_NE(e.find("8 bytes; rank 1 of 2"), std::string::npos) << e;
    EXPECT_NE(e.find("sent " + std::to_string(ShmRing::kBytes + 8) + " bytes; expected"),
              std::string::npos)
        << e;
    std::vector<std::uint8_t> five(5);
    c.recv(five.data(), 5, DType::kUInt8, 0, 0);
    EXPECT_TRUE(five == bytes_of(5, 2));
  });
}

// The sender goes (its communicator destroyed past its deadline) with only part of a message
// out: a message above the kept budget is held back until its receive, so it cannot have left
// whole. The receive fails naming the sender and how far the message came.
TEST_P(Paths, APeerThatGoesInTheMiddleOfAMessageIsNamed) {
  const std::size_t n = dtrain::runtime::Mailbox::kUnexpectedBudget + (std::size_t{1} << 20);
  auto store = dtrain::runtime::make_memory_store();
  std::latch gone(1);
  dtrain::test::threads_as_ranks(2, [&](int rank) {
    auto engine = engine_for(store, GetParam(), rank, 2, std::chrono::milliseconds(500));
    Comm c(*engine);
    if (rank == 0) {
      const std::vector<std::uint8_t> big = bytes_of(n, 3);
      { dtrain::Work w = c.isend(big.data(), n, DType::kUInt8, 1, 0); }  // dropped, not waited
      engine.reset();
      gone.count_down();
      return;
    }
    gone.wait();
    std::vector<std::uint8_t> big(n);
    const std::string e = error_of([&] { c.recv(big.data(), n, DType::kUInt8, 0, 0); });
    EXPECT_NE(e.find("recv from rank 0 (on node"), std::string::npos) << e;
    EXPECT_NE(e.find("rank 0 (on node"), std::string::npos) << e;
    EXPECT_NE(e.find("closed its connection"), std::string::npos) << e;
    EXPECT_NE(e.find("bytes into the message"), std::string::npos) << e;
  });
}

// Both ranks send a message larger than a ring before either receives (each send blocks until
// its bytes are taken): a message left in its sender's memory for its receive (Mailbox::kParkFor)
// is kept after a while, so neither send waits for the other's receive.
TEST_P(Paths, BothRanksSendingALargeMessageBeforeTheyReceiveComplete) {
  const std::size_t n = ShmRing::kBytes * 4 + 1;
  ranks(2, [&](Comm& c, int rank) {
    for (int round = 0; round < 3; ++round) {
      c.send(bytes_of(n, rank + round).data(), n, DType::kUInt8, 1 - rank, 0);
      std::vector<std::uint8_t> got(n);
      c.recv(got.data(), n, DType::kUInt8, 1 - rank, 0);
      EXPECT_TRUE(got == bytes_of(n, 1 - rank + round)) << "round " << round;
    }
  });
}

// The dead reader: a receiver that goes (its process killed, here its engine destroyed: the
// sender sees the same, its connection's end) while its ring is full and a send waits for room.
// That send fails naming it, from the connection's end, not at its deadline (60 s here; the
// reader's engine, which waits that long for its peers at its end, has 0.5 s); so do the sends
// queued behind it, and the next send to it at once.
TEST(PointToPointSharedMemory, AReceiverThatGoesWithItsRingFullIsNamedByTheWaitingSender) {
  constexpr std::size_t kEach = std::size_t{16} << 10;
  constexpr int kSends = static_cast<int>(ShmRing::kBytes / kEach) * 2;  // twice the ring
  auto store = dtrain::runtime::make_memory_store();
  std::latch full(1);
  std::latch gone(1);
  dtrain::test::threads_as_ranks(2, [&](int rank) {
    using std::chrono::milliseconds;
    auto engine =
        engine_for(store, true, rank, 2, rank == 1 ? milliseconds(500) : milliseconds(60000));
    Comm c(*engine);
    if (rank == 1) {  // never receives: nothing reads its ring
      full.wait();
      engine.reset();
      gone.count_down();
      return;
    }
    const std::vector<std::uint8_t> data = bytes_of(kEach, 1);
    std::vector<dtrain::Work> sends;
    for (int i = 0; i < kSends; ++i)
      sends.push_back(c.isend(data.data(), kEach, DType::kUInt8, 1, 0));
    // The messages that fit are in the ring (the connection is made: it is written only then),
    // and the rest wait for room.
    for (int i = 0; i < kSends / 2 - 1; ++i) sends[static_cast<std::size_t>(i)].wait();
    EXPECT_FALSE(sends.back().test()) << "the ring should be full";
    full.count_down();
    gone.wait();
    std::string last;
    int failed = 0;
    for (dtrain::Work& w : sends) {
      const std::string e = error_of([&] { w.wait(); });
      if (e == "(no error)") continue;
      ++failed;
      last = e;
    }
    EXPECT_GE(failed, kSends / 2) << "the sends beyond the ring's room";
    EXPECT_LT(failed, kSends) << "the sends that fit completed";
    EXPECT_NE(last.find("send to rank 1 (on node"), std::string::npos) << last;
    EXPECT_NE(last.find("its connection closed (its process ended?)"), std::string::npos) << last;
    EXPECT_EQ(last.find("not taken within"), std::string::npos)
        << "failed at its deadline: " << last;
    const std::string next = error_of([&] { c.send(data.data(), kEach, DType::kUInt8, 1, 0); });
    EXPECT_NE(next.find("send to rank 1 (on node"), std::string::npos) << next;
  });
}

INSTANTIATE_TEST_SUITE_P(PointToPoint, Paths, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? "SharedMemory" : "Sockets";
                         });

}  // namespace

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// A large message whose receive is posted after it came is read once, straight into the receive:
// within a node from its sender's memory, across nodes from its connection (both parked,
// Mailbox::kParkFor). No buffer of its size is allocated and faulted in to keep it meanwhile
// (which made a 64 MiB ping-pong within a node 60x a memcpy, and 8 nodes' alltoall half the
// link's rate). Seen as the page faults this process takes from the barrier to the receive's end:
// a kept copy of 16 MiB faults in 4,096 pages. The receive comes 2 ms after the send (well within
// kParkFor); best of 3, a busy machine may delay it more.
TEST_P(Paths, ALargeMessageWhoseReceiveComesLateIsReadOnceIntoIt) {
  const std::size_t n = std::size_t{16} << 20;
  const std::vector<std::uint8_t> sent = bytes_of(n, 5);
  long fewest = -1;
  for (int attempt = 0; attempt < 3 && (fewest < 0 || fewest >= 1024); ++attempt) {
    std::vector<std::uint8_t> got(n, 0);  // faulted in before the clock
    long faults = 0;
    ranks(2, [&](Comm& c, int rank) {
      // A first message opens the connection (or ring), so that the large one comes at once.
      std::uint8_t one = 1;
      if (rank == 0) c.send(&one, 1, DType::kUInt8, 1, 1);
      if (rank == 1) c.recv(&one, 1, DType::kUInt8, 0, 1);
      c.barrier();
      if (rank == 0) {
        c.send(sent.data(), n, DType::kUInt8, 1, 0);
      } else {
        // From before the message came: its mailbox's thread (this process's too) would fault a
        // kept copy in as the bytes arrive.
        const long before = minor_faults();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        c.recv(got.data(), n, DType::kUInt8, 0, 0);
        faults = minor_faults() - before;
      }
      c.barrier();
    });
    EXPECT_TRUE(got == sent);
    fewest = fewest < 0 ? faults : std::min(fewest, faults);
  }
  EXPECT_LT(fewest, 1024) << "page faults of a 16 MiB receive posted after its message came";
}

}  // namespace
