// An in-memory transport for the schedules that take a RecursiveDoubling::Transfer (the doubling,
// the ring, the log-step allgather), with threads as ranks (threads_as_ranks.hpp): messages from
// one rank to another arrive in order, a send never waits (MPI's eager sends), and every message is
// recorded so that a test can assert each rank's partners and sizes.
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "comm/algorithms/recursive_doubling.hpp"

namespace dtrain::test {

class Mailboxes {
 public:
  runtime::RecursiveDoubling::Transfer transport(int me) {
    return [this, me](const void* send, std::size_t send_bytes, int to, void* recv,
                      std::size_t recv_bytes, int from) {
      if (to >= 0) post(me, to, send, send_bytes);
      if (from >= 0) take(from, me, recv, recv_bytes);
    };
  }

  struct Sent {
    int to;
    std::size_t bytes;
    bool operator==(const Sent&) const = default;
  };
  // Each rank's messages, in the order it sent them.
  std::map<int, std::vector<Sent>> sent() {
    std::lock_guard lock(mutex_);
    return sent_;
  }

 private:
  void post(int from, int to, const void* data, std::size_t bytes) {
    const char* p = static_cast<const char*>(data);
    {
      std::lock_guard lock(mutex_);
      boxes_[{from, to}].emplace_back(p, p + bytes);
      sent_[from].push_back({to, bytes});
    }
    changed_.notify_all();
  }
  void take(int from, int to, void* data, std::size_t bytes) {
    std::unique_lock lock(mutex_);
    auto& box = boxes_[{from, to}];
    changed_.wait(lock, [&] { return !box.empty(); });
    ASSERT_EQ(box.front().size(), bytes);
    std::memcpy(data, box.front().data(), bytes);
    box.pop_front();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> boxes_;
  std::map<int, std::vector<Sent>> sent_;
};

}  // namespace dtrain::test
