// map_node_memory with threads as ranks: each node's members share one object (what one member
// writes into its segment the others read), every member's segment prepared, and the object
// unlinked once all have it; when one member cannot open it, every rank of every node gets none.
#include "comm/transport/shm/node_memory.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <barrier>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "comm/transport/shm/shm_allreduce.hpp"
#include "threads_as_ranks.hpp"

namespace {

using dtrain::runtime::NodeMemoryLinks;
using dtrain::runtime::PosixShm;
using dtrain::runtime::ShmAllreduce;

// Blocking in-memory messages, a minimum over every rank and a barrier, for `size` threads.
class Links {
 public:
  explicit Links(int size) : size_(size), sync_(size) {}
  NodeMemoryLinks of(int rank) {
    return {[this](std::int32_t v) { return least(v); },
            [this, rank](int peer, const void* buf, std::size_t bytes) {
              const auto* p = static_cast<const char*>(buf);
              const std::lock_guard<std::mutex> lock(mutex_);
              queues_[{rank, peer}].emplace_back(p, p + bytes);
              arrived_.notify_all();
            },
            [this, rank](int peer, void* buf, std::size_t bytes) {
              std::unique_lock<std::mutex> lock(mutex_);
              auto& q = queues_[{peer, rank}];
              arrived_.wait(lock, [&] { return !q.empty(); });
              ASSERT_EQ(q.front().size(), bytes);
              std::memcpy(buf, q.front().data(), bytes);
              q.pop_front();
            },
            [this] { sync_.arrive_and_wait(); }};
  }

 private:
  std::int32_t least(std::int32_t v) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (votes_ == 0) low_ = v;
      low_ = std::min(low_, v);
      ++votes_;
    }
    sync_.arrive_and_wait();
    const std::int32_t result = low_;
    sync_.arrive_and_wait();
    const std::lock_guard<std::mutex> lock(mutex_);
    if (--votes_ == 0) low_ = 0;
    return result;
  }

  int size_;
  std::barrier<> sync_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> queues_;
  int votes_ = 0;
  std::int32_t low_ = 0;
};

constexpr std::size_t kPiece = 4096;

TEST(NodeMemory, EachNodesMembersShareOneObject) {
  // Ranks 0, 2 on one node and 1, 3 on another.
  const std::vector<std::vector<int>> members = {{0, 2}, {1, 3}, {0, 2}, {1, 3}};
  Links links(4);
  std::vector<std::vector<char*>> segments(4);
  std::vector<PosixShm> memory(4);
  std::barrier<> written(4);
  std::vector<std::string> seen(4);
  dtrain::test::threads_as_ranks(4, [&](int r) {
    const auto& node = members[static_cast<std::size_t>(r)];
    auto& mine = segments[static_cast<std::size_t>(r)];
    mine = dtrain::runtime::map_node_memory(r, node, kPiece, links.of(r),
                                            memory[static_cast<std::size_t>(r)]);
    ASSERT_EQ(mine.size(), 2u);
    const std::size_t self = r < 2 ? 0 : 1;
    // The segment's buffers, past the counters the set-up zeroed, carry a note to the other.
    char* note = mine[self] + ShmAllreduce::segment_bytes(kPiece, 2) - 64;
    const std::string text = "from rank " + std::to_string(r);
    std::memcpy(note, text.c_str(), text.size() + 1);
    written.arrive_and_wait();
    seen[static_cast<std::size_t>(r)] =
        mine[1 - self] + ShmAllreduce::segment_bytes(kPiece, 2) - 64;
  });
  EXPECT_EQ(seen,
            (std::vector<std::string>{"from rank 2", "from rank 3", "from rank 0", "from rank 1"}));
  // Unlinked once mapped: nothing of this process's is left in /dev/shm.
  const std::string prefix = "dtrain-" + std::to_string(::getpid()) + "-";
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    EXPECT_NE(entry.path().filename().string().rfind(prefix, 0), 0u) << entry.path();
  }
}

TEST(NodeMemory, WhenOneMemberCannotOpenItNoRankGetsAny) {
  // Rank 1's node's first member (rank 1) sends a name nobody created: rank 3 fails to open it.
  Links links(4);
  std::vector<std::size_t> got(4, 99);
  dtrain::test::threads_as_ranks(4, [&](int r) {
    const std::vector<int> node = r % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3};
    NodeMemoryLinks l = links.of(r);
    if (r == 1) {
      // Stands in for a first member whose name the others cannot open.
      const auto send = l.send;
      l.send = [send](int peer, const void*, std::size_t bytes) {
        std::vector<char> bogus(bytes, '\0');
        const std::string name = "/dtrain-test-no-such-object";
        std::memcpy(bogus.data(), name.data(), name.size());
        send(peer, bogus.data(), bytes);
      };
    }
    PosixShm memory;
    got[static_cast<std::size_t>(r)] =
        dtrain::runtime::map_node_memory(r, node, kPiece, l, memory).size();
  });
  EXPECT_EQ(got, (std::vector<std::size_t>{0, 0, 0, 0}));
}

}  // namespace
