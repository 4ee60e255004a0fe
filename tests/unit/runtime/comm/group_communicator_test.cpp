// Sub-communicators (Comm::split, Comm::subgroup) on the TCP backend, ranks as threads: MPI's
// split order, every collective and message in the group's numbering while another group and
// the world run theirs, nesting, ranks left out, and 64 groups that open no connection a pair
// did not need.
#include "comm/group_communicator.hpp"

#include <gtest/gtest.h>

#include <dirent.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "error_text.hpp"
#include "tcp_test_ranks.hpp"

namespace {

using dtrain::Comm;
using dtrain::DType;
using dtrain::Error;
using dtrain::ReduceOp;
using dtrain::test::tcp_comm_ranks;

using dtrain::test::error_of;

int open_descriptors() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

// Every collective of `g` (size n, this rank's group rank r), exact.
void every_collective(Comm& g, int world_rank) {
  const int r = g.rank();
  const int n = g.size();
  for (std::size_t count : {std::size_t{3}, std::size_t{300000}}) {  // doubling, then the ring
    std::vector<float> v(count, static_cast<float>(r + 1));
    g.allreduce(v.data(), v.data(), count, DType::kFloat32, ReduceOp::kSum);
    EXPECT_EQ(v[count - 1], static_cast<float>(n * (n + 1) / 2)) << count;
  }
  std::vector<std::int64_t> b = {r == n - 1 ? 42 : 0, world_rank};
  g.broadcast(b.data(), 1, DType::kInt64, n - 1);
  EXPECT_EQ(b[0], 42);
  // Allgather: in log2(n) steps (small), then by the ring (above kLogStepAllgatherUpTo in all).
  std::vector<std::int32_t> all(static_cast<std::size_t>(n));
  const std::int32_t mine = world_rank;
  g.allgather(&mine, all.data(), 1, DType::kInt32);
  const std::size_t large = 70000;  // 280 KB a rank
  std::vector<std::int32_t> blocks(large * static_cast<std::size_t>(n));
  g.allgather(std::vector<std::int32_t>(large, r * 1000 + 7).data(), blocks.data(), large,
              DType::kInt32);
  for (int q = 0; q < n; ++q) {
    EXPECT_EQ(blocks[static_cast<std::size_t>(q) * large], q * 1000 + 7) << "group rank " << q;
    EXPECT_EQ(blocks[(static_cast<std::size_t>(q) + 1) * large - 1], q * 1000 + 7);
  }
  std::vector<double> rs(static_cast<std::size_t>(n), 1.0);
  double got = 0;
  g.reduce_scatter(rs.data(), &got, 1, DType::kFloat64, ReduceOp::kSum);
  EXPECT_EQ(got, n);
  g.barrier();
  // A ring of messages in the group's numbering; the sender named as a group rank.
  std::int32_t from = -1;
  dtrain::Work w = g.irecv(&from, 1, DType::kInt32, Comm::kAnySource, 9);
  const std::int32_t me = r;
  g.send(&me, 1, DType::kInt32, (r + 1) % n, 9);
  w.wait();
  EXPECT_EQ(w.source(), (r + n - 1) % n);
  EXPECT_EQ(from, (r + n - 1) % n);
  std::vector<std::int32_t> gathered(static_cast<std::size_t>(n));
  g.gather(&mine, r == 0 ? gathered.data() : nullptr, 1, DType::kInt32, 0);
  if (r == 0) {
    EXPECT_EQ(gathered, all);
  }
  // Every member's world rank, by group rank: the same on every member.
  std::vector<std::int32_t> worlds = all;
  g.broadcast(worlds.data(), worlds.size(), DType::kInt32, 0);
  EXPECT_EQ(all, worlds);
  EXPECT_EQ(all[static_cast<std::size_t>(r)], world_rank);
}

TEST(GroupCommunicator, SplitOrdersByKeyThenRankAndRunsEveryCollective) {
  tcp_comm_ranks(4, [&](Comm& c, int rank) {
    // Even and odd ranks, in reverse order of rank within each.
    std::optional<Comm> g = c.split(rank % 2, -rank);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->size(), 2);
    EXPECT_EQ(g->rank(), rank < 2 ? 1 : 0);
    every_collective(*g, rank);
    std::vector<std::int32_t> members(2);
    const std::int32_t mine = rank;
    g->allgather(&mine, members.data(), 1, DType::kInt32);
    EXPECT_EQ(members, rank % 2 == 0 ? (std::vector<std::int32_t>{2, 0})
                                     : (std::vector<std::int32_t>{3, 1}));
    // The world's collectives still line up after the groups'.
    std::int32_t sum = 1;
    c.allreduce(&sum, &sum, 1, DType::kInt32, ReduceOp::kSum);
    EXPECT_EQ(sum, 4);
    // A group of a group: each pair again, alone.
    std::optional<Comm> alone = g->split(g->rank(), 0);
    ASSERT_TRUE(alone);
    EXPECT_EQ(alone->size(), 1);
    every_collective(*alone, rank);
  });
}

TEST(GroupCommunicator, RanksWithoutAColorAndOutsideASubgroupJoinNone) {
  tcp_comm_ranks(4, [&](Comm& c, int rank) {
    std::optional<Comm> three = c.split(rank == 3 ? Comm::kNoGroup : 0, rank);
    EXPECT_EQ(three.has_value(), rank != 3);
    if (three) every_collective(*three, rank);
    const std::vector<int> odd = {3, 1};
    std::optional<Comm> g = c.subgroup(odd);
    EXPECT_EQ(g.has_value(), rank % 2 == 1);
    if (g) {
      EXPECT_EQ(g->rank(), rank == 3 ? 0 : 1);
      every_collective(*g, rank);
    }
    c.barrier();
  });
}

TEST(GroupCommunicator, SixtyFourGroupsOpenNoConnectionAPairDidNotNeed) {
  constexpr int kGroups = 64;
  int before = 0;
  std::vector<int> after(4);
  tcp_comm_ranks(4, [&](Comm& c, int rank) {
    // Every pair's mailbox connections opened once, through the world.
    std::vector<std::int32_t> in(4, rank), out(4);
    c.alltoall(in.data(), out.data(), 1, DType::kInt32);
    c.barrier();
    if (rank == 0) before = open_descriptors();
    c.barrier();
    for (int i = 0; i < kGroups; ++i) {
      const std::vector<int> pair = {
          i % 4, (i + 1 + i / 4) % 4 == i % 4 ? (i + 2) % 4 : (i + 1 + i / 4) % 4};
      std::optional<Comm> g = c.subgroup(pair);
      if (g) {
        std::int32_t x = 1;
        g->allreduce(&x, &x, 1, DType::kInt32, ReduceOp::kSum);
        EXPECT_EQ(x, 2);
      }
    }
    c.barrier();
    // Rank 0 alone counts: another rank's opendir would be one more descriptor meanwhile.
    if (rank == 0) after[0] = open_descriptors();
    c.barrier();
  });
  // One process holds the 4 ranks: its descriptors grew by no more than each group's eventfd
  // while it lived (none now), whatever the number of groups.
  EXPECT_LE(after[0] - before, 0);
}

// A subgroup given a number (torch's new_group count) agrees on nothing: rank 0 makes it and
// runs on while rank 1, its other member, still waits for rank 0's message before making it (an
// agreement would wait for rank 1 there until the world's timeout). Its collectives then run
// beside a split's group and the world's, each in its own messages.
TEST(GroupCommunicator, ANumberedSubgroupWaitsForNoRankAndRunsEveryCollective) {
  tcp_comm_ranks(4, [&](Comm& c, int rank) {
    std::optional<Comm> halves = c.split(rank % 2, rank);
    const std::vector<int> pair = {1, 0};
    std::int32_t x = 5;
    if (rank == 1) c.recv(&x, 1, DType::kInt32, 0, 9);
    std::optional<Comm> g = c.subgroup(pair, std::nullopt, 0);
    if (rank == 0) c.send(&x, 1, DType::kInt32, 1, 9);
    EXPECT_EQ(g.has_value(), rank < 2);
    if (g) {
      EXPECT_EQ(g->rank(), 1 - rank);
      every_collective(*g, rank);
    }
    every_collective(*halves, rank);
    // Numbers are the caller's and may be any in range, in any order.
    const std::vector<int> all = {3, 2, 1, 0};
    std::optional<Comm> reversed = c.subgroup(all, std::nullopt, (std::int64_t{1} << 30) - 2);
    EXPECT_EQ(reversed->rank(), 3 - rank);
    every_collective(*reversed, rank);
  });
}

TEST(GroupCommunicator, ANumberGivenTwiceOrOutOfRangeIsRefusedByName) {
  tcp_comm_ranks(3, [&](Comm& c, int rank) {
    const std::vector<int> first = {0, 1};
    const std::vector<int> second = {1, 2};
    std::optional<Comm> g = c.subgroup(first, std::nullopt, 7);
    // Rank 1 holds both: the two groups would take each other's messages there.
    const std::string twice = error_of([&] { (void)c.subgroup(second, std::nullopt, 7); });
    EXPECT_EQ(twice, rank == 1 ? "dtrain: subgroup: number 7 was given to an earlier group of "
                                 "this Context; expected a number given to no other group (the "
                                 "same on every member, as torch's new_group count is)"
                               : "(no error)")
        << rank;
    for (const std::int64_t bad : {std::int64_t{-1}, std::int64_t{1} << 30}) {
      EXPECT_EQ(error_of([&] { (void)c.subgroup(second, std::nullopt, bad); }),
                "dtrain: subgroup: number; expected 0 to 1073741822, got " + std::to_string(bad))
          << "every rank, member or not";
    }
    c.barrier();
  });
}

// A subgroup given its own timeout (torch's new_group(timeout=...)): its collectives and its
// messages fail at that deadline, not at the world's 30 s, and say whose timeout it was.
TEST(GroupCommunicator, ASubgroupsOwnTimeoutEndsItsWaitsAndIsNamed) {
  std::string barrier_error;
  std::string message_error;
  std::chrono::steady_clock::duration took{};
  tcp_comm_ranks(3, [&](Comm& c, int rank) {
    const std::vector<int> members = {1, 2};
    std::optional<Comm> g = c.subgroup(members, std::chrono::milliseconds(300));
    if (rank == 1) {  // rank 2 never sends, nor enters the group's barrier
      std::int32_t x = 0;
      message_error = error_of([&] { g->recv(&x, 1, DType::kInt32, 1, 5); });
      const auto start = std::chrono::steady_clock::now();
      barrier_error = error_of([&] { g->barrier(); });
      took = std::chrono::steady_clock::now() - start;
    }
    c.barrier();
  });
  EXPECT_NE(barrier_error.find(" 0.3 s (the timeout given for this group, not DTRAIN_TIMEOUT)"),
            std::string::npos)
      << barrier_error;
  EXPECT_LT(took, std::chrono::seconds(10)) << "the world's 30 s, not the group's 0.3 s";
  EXPECT_EQ(message_error.find("dtrain: recv"), 0u) << message_error;
  EXPECT_NE(message_error.find("no message within 0.3 s (the timeout given for this group"),
            std::string::npos)
      << message_error;
}

// Errors of a group name each rank in both numberings, "group rank 1 (world rank 5)". The groups
// here number their ranks against the world's: split(rank % 2, -rank) makes {2, 0} and {3, 1}.
std::optional<Comm> reversed_halves(Comm& c) { return c.split(c.rank() % 2, -c.rank()); }

// A refused connection's port differs from run to run.
std::string without_port(std::string e) {
  const std::size_t at = e.find(" at ");
  const std::size_t end = e.find(" (refused");
  if (at != std::string::npos && end != std::string::npos) e.replace(at, end - at, " at HOST:PORT");
  return e;
}

TEST(GroupCommunicator, AMessagesSizeMismatchNamesBothRanksInBothNumberings) {
  const std::string h = dtrain::test::host_name();
  std::string e;
  tcp_comm_ranks(4, [&](Comm& c, int rank) {
    std::optional<Comm> g = reversed_halves(c);
    if (rank == 3) g->send<std::int32_t>(std::vector<std::int32_t>{1, 2}, 1, 7);
    if (rank == 1) {
      std::int32_t one = 0;
      e = error_of([&] { g->recv(&one, 1, DType::kInt32, 0, 7); });
    }
  });
  EXPECT_EQ(e, "dtrain: recv from group rank 0 (world rank 3, on " + h +
                   ") (tag 7, 4 bytes; group rank 1 (world rank 1) of 2): group rank 0 (world rank "
                   "3, on " +
                   h +
                   ") sent 8 bytes; expected a message of the receive's size: send and receive the "
                   "same count and type");
}

// A group's collective whose ranks pass different calls: each of its messages carries the call's
// header (call_check.hpp), and a receive that meets another call names both, in both numberings,
// whether the sizes differ (a count) or not (an element type).
TEST(GroupCommunicator, ACollectivesCallMismatchNamesBothRanksInBothNumberings) {
  const std::string h = dtrain::test::host_name();
  std::vector<std::string> e(4), types(4);
  tcp_comm_ranks(4, [&](Comm& c, int rank) {
    std::optional<Comm> g = reversed_halves(c);
    if (rank % 2 == 1) return;
    const auto r = static_cast<std::size_t>(rank);
    std::vector<float> v(rank == 0 ? 4 : 3, 1.0F);
    e[r] = error_of(
        [&] { g->allreduce(v.data(), v.data(), v.size(), DType::kFloat32, ReduceOp::kSum); });
    g->barrier();
    const DType type = rank == 0 ? DType::kFloat32 : DType::kInt32;
    types[r] = error_of([&] { g->allreduce(v.data(), v.data(), 3, type, ReduceOp::kSum); });
  });
  const std::string r0 = "group rank 0 (world rank 2, on " + h + ")";
  const std::string r1 = "group rank 1 (world rank 0, on " + h + ")";
  // The groups' first collective (#0), in the space of the first group made (id 1).
  EXPECT_EQ(e[0], "dtrain: allreduce #0 (16 bytes, group rank 1 (world rank 0) of 2): recv from " +
                      r0 +
                      " (tag -4294967297, 16 bytes; group rank 1 (world rank 0) of 2): ranks "
                      "passed different calls to one collective: " +
                      r0 + " passed 3 float32 elements (sum), " + r1 +
                      " passed 4 float32 elements (sum); every rank must pass the same number of "
                      "elements, element type and operation");
  EXPECT_EQ(e[2], "dtrain: allreduce #0 (12 bytes, group rank 0 (world rank 2) of 2): recv from " +
                      r1 +
                      " (tag -4294967297, 12 bytes; group rank 0 (world rank 2) of 2): ranks "
                      "passed different calls to one collective: " +
                      r0 + " passed 3 float32 elements (sum), " + r1 +
                      " passed 4 float32 elements (sum); every rank must pass the same number of "
                      "elements, element type and operation");
  for (std::size_t r : {0, 2}) {
    EXPECT_NE(types[r].find(r0 + " passed 3 int32 elements (sum), " + r1 +
                            " passed 3 float32 elements (sum)"),
              std::string::npos)
        << types[r];
  }
}

TEST(GroupCommunicator, ATimeoutNamesTheRankAwaitedInBothNumberings) {
  const std::string h = dtrain::test::host_name();
  std::string message_error;
  std::string barrier_error;
  tcp_comm_ranks(4, [&](Comm& c, int rank) {
    const std::vector<int> members = {3, 1};
    std::optional<Comm> g = c.subgroup(members, std::chrono::milliseconds(300));
    if (rank == 1) {  // rank 3 never sends, nor enters the group's barrier
      std::int32_t x = 0;
      message_error = error_of([&] { g->recv(&x, 1, DType::kInt32, 0, 5); });
      barrier_error = error_of([&] { g->barrier(); });
    }
    c.barrier();
  });
  const std::string awaited = "group rank 0 (world rank 3, on " + h + ")";
  const std::string expected =
      "; expected " + awaited +
      " to send one with this tag (is it alive, and sending to this rank?)";
  EXPECT_EQ(message_error, "dtrain: recv from " + awaited +
                               " (tag 5, 4 bytes; group rank 1 (world rank 1) of 2): no message "
                               "within 0.3 s (the timeout given for this group, not "
                               "DTRAIN_TIMEOUT)" +
                               expected);
  EXPECT_EQ(barrier_error,
            "dtrain: barrier #0 (0 bytes, group rank 1 (world rank 1) of 2): recv "
            "from " +
                awaited +
                " (tag -4294967297, 4 bytes; group rank 1 (world rank 1) of 2): no "
                "message within 0.3 s (the timeout given for this group, not "
                "DTRAIN_TIMEOUT)" +
                expected);
}

// World rank 0 (group rank 1 of {2, 0}) leaves without a message: its group peer's receive and
// collective (whose send to it fails first) name it in both numberings.
TEST(GroupCommunicator, ALostRankIsNamedInBothNumberings) {
  const std::string h = dtrain::test::host_name();
  std::string message_error;
  std::string barrier_error;
  auto store = dtrain::runtime::make_memory_store();
  dtrain::test::threads_as_ranks(4, [&](int rank) {
    dtrain::runtime::Settings s = dtrain::test::settings(false);
    s.timeout = std::chrono::seconds(20);
    dtrain::runtime::PrefixStore tcp(store, "tcp");
    auto engine = std::make_unique<dtrain::runtime::Engine>(
        dtrain::runtime::make_tcp_communicator(tcp, rank, 4, s), rank, 4, s);
    auto c = std::make_unique<Comm>(*engine);
    std::optional<Comm> g = reversed_halves(*c);
    if (rank == 0) {
      g.reset();
      c.reset();
      engine.reset();  // its sockets close, as a killed process's do
      return;
    }
    if (rank != 2) return;
    std::int32_t x = 0;
    message_error = error_of([&] { g->recv(&x, 1, DType::kInt32, 1, 3); });
    barrier_error = error_of([&] { g->barrier(); });
  });
  const std::string lost = "group rank 1 (world rank 0, on " + h + ")";
  const std::string why =
      ": " + lost +
      ": could not connect to its listener at HOST:PORT (refused: its process ended?)";
  EXPECT_EQ(
      without_port(message_error),
      "dtrain: recv from " + lost + " (tag 3, 4 bytes; group rank 0 (world rank 2) of 2)" + why);
  EXPECT_EQ(without_port(barrier_error),
            "dtrain: barrier #0 (0 bytes, group rank 0 (world rank 2) of 2): send to " + lost +
                " (tag -4294967297, 4 bytes; group rank 0 (world rank 2) of 2)" + why);
}

TEST(GroupCommunicator, BadColorsAndRanksAreRefusedByName) {
  tcp_comm_ranks(2, [&](Comm& c, int) {
    EXPECT_EQ(error_of([&] { (void)c.split(-5, 0); }),
              "dtrain: split: color; expected 0 or more, or kNoGroup (-1), got -5");
    const std::vector<int> twice = {0, 0};
    EXPECT_EQ(error_of([&] { (void)c.subgroup(twice); }),
              "dtrain: subgroup: ranks: 0 appears twice; expected each rank once");
    const std::vector<int> far = {0, 7};
    EXPECT_EQ(error_of([&] { (void)c.subgroup(far); }),
              "dtrain: subgroup: ranks: 7 is out of range; expected 0 to 1");
    const std::vector<int> both = {0, 1};
    EXPECT_EQ(error_of([&] { (void)c.subgroup(both, std::chrono::milliseconds(0)); }),
              "dtrain: subgroup: timeout; expected a positive duration, got 0 ms");
  });
}

}  // namespace
