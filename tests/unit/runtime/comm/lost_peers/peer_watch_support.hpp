// What the PeerWatch tests share: a forked child standing in for another rank's process on this
// node, a peer record for it, and the reports a watch made, waited for with a limit.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "comm/lost_peers/peer_watch.hpp"

namespace dtrain::test {

using runtime::PeerProcess;
using runtime::PeerWatch;

inline constexpr std::uint64_t kToken = 0xfeedfacecafe0001ULL;

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

inline PeerProcess as_rank(int rank, pid_t pid, const PeerProcess& like) {
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
  std::vector<int> told_by;
  bool reported = true;  // what the callback answers: whether "the engine" reported the loss
  std::optional<PeerProcess> wait_first(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex);
    if (!cv.wait_for(lock, limit, [&] { return !lost.empty(); })) return std::nullopt;
    return lost.front();
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return lost.size();
  }
  PeerWatch::OnLost callback() {
    return [this](const PeerProcess& p, int by, const std::function<void()>& announce) {
      if (reported) announce();
      std::lock_guard lock(mutex);
      lost.push_back(p);
      told_by.push_back(by);
      cv.notify_all();
      return reported;
    };
  }
};

}  // namespace dtrain::test
