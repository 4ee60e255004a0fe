#include "comm/peer_watch.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

namespace dtrain::runtime {
namespace {

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

int pidfd_open(std::int64_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

PeerProcess this_process(int rank, const std::string& host) {
  PeerProcess p;
  p.rank = rank;
  p.pid = getpid();
  p.host = host;
  struct stat ns {};
  const std::string boot = boot_id();
  // Two containers on one node may each have a process 42: the namespace tells them apart, and
  // the boot id tells nodes apart (the initial pid namespace has the same inode on every host).
  if (!boot.empty() && stat("/proc/self/ns/pid", &ns) == 0) {
    p.node = boot + "/" + std::to_string(ns.st_dev) + ":" + std::to_string(ns.st_ino);
  }
  return p;
}

std::string encode_peer_record(const PeerProcess& p) {
  std::string text = std::to_string(p.rank) + "\n" + std::to_string(p.pid) + "\n" + p.node;
  // A node key too long to fit is dropped whole: a cut one could match another node's.
  if (text.size() >= kPeerRecordBytes) text = std::to_string(p.rank) + "\n0\n";
  text.resize(kPeerRecordBytes, '\0');
  return text;
}

PeerProcess decode_peer_record(const char* record, const std::string& host) {
  const std::string text(record, strnlen(record, kPeerRecordBytes));
  PeerProcess p;
  p.host = host;
  const auto first = text.find('\n');
  const auto second = first == std::string::npos ? first : text.find('\n', first + 1);
  if (second == std::string::npos) return p;
  p.rank = static_cast<int>(std::strtol(text.substr(0, first).c_str(), nullptr, 10));
  p.pid = std::strtoll(text.substr(first + 1, second - first - 1).c_str(), nullptr, 10);
  p.node = text.substr(second + 1);
  return p;
}

PeerWatch::PeerWatch(const std::vector<PeerProcess>& peers, const PeerProcess& self, OnLost on_lost)
    : on_lost_(std::move(on_lost)) {
  if (self.node.empty()) return;
  try {
    for (const PeerProcess& p : peers) {
      if (p.rank == self.rank || p.node != self.node || p.pid <= 0) continue;
      const int fd = pidfd_open(p.pid);
      if (fd < 0 && errno == ENOSYS) {  // a kernel before 5.3: nothing can be watched
        close_all();
        return;
      }
      // The peer was alive in the exchange that gave us its pid, so ESRCH means it has ended
      // since; any other failure (out of descriptors) leaves it unwatched.
      if (fd < 0 && errno != ESRCH) continue;
      try {
        watched_.push_back({p, fd});
      } catch (...) {
        if (fd >= 0) close(fd);
        throw;
      }
    }
  } catch (...) {
    close_all();  // the destructor will not run
    throw;
  }
  if (watched_.empty()) return;
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) {
    // Out of descriptors: no watch; a lost peer then shows only as the collective's timeout.
    close_all();
    return;
  }
  try {
    thread_ = std::thread([this] { loop(); });
  } catch (...) {
    close_all();
    throw;
  }
}

PeerWatch::~PeerWatch() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof one) < 0) {
      // An eventfd write fails only on counter overflow, which one write cannot reach.
    }
    thread_.join();
  }
  close_all();
}

void PeerWatch::close_all() noexcept {
  for (const Watched& w : watched_)
    if (w.fd >= 0) close(w.fd);
  watched_.clear();
  if (stop_fd_ >= 0) close(stop_fd_);
  stop_fd_ = -1;
}

void PeerWatch::loop() {
  for (const Watched& w : watched_) {
    if (w.fd < 0) {
      on_lost_(w.process);
      return;
    }
  }
  std::vector<pollfd> fds;
  fds.push_back({stop_fd_, POLLIN, 0});
  for (const Watched& w : watched_) fds.push_back({w.fd, POLLIN, 0});
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;  // cannot watch any more; the collectives' deadline still applies
    }
    if (fds[0].revents != 0) return;
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) {
        on_lost_(watched_[i - 1].process);
        return;  // one report: the launcher ends the job anyway
      }
    }
  }
}

}  // namespace dtrain::runtime
