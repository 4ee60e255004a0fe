#include "comm/lost_peers/peer_watch.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include "comm/lost_peers/peer_alarm.hpp"
#include "common/child_process.hpp"
#include "common/number_text.hpp"
#include "common/thread_name.hpp"

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

PeerWatch::PeerWatch(const std::vector<PeerProcess>& peers, const PeerProcess& self, OnLost on_lost,
                     std::unique_ptr<PeerAlarm> alarm)
    : self_rank_(self.rank),
      self_host_(self.host),
      on_lost_(std::move(on_lost)),
      alarm_(std::move(alarm)) {
  try {
    // Without a node key no process can be watched; the alarm may still come.
    if (!self.node.empty()) open_pidfds(peers, self);
  } catch (...) {
    close_all();  // the destructor will not run
    throw;
  }
  if (watched_.empty() && !alarm_) return;
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) {
    // Out of descriptors: no watch; a lost peer then shows only as the collective's timeout.
    close_all();
    return;
  }
  try {
    thread_ = named_thread("dtrain-watch", [this] { loop(); });
  } catch (...) {
    close_all();
    throw;
  }
}

PeerWatch::~PeerWatch() {
  stop_thread();
  close_all();
}

void PeerWatch::stop_thread() noexcept {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  if (write(stop_fd_, &one, sizeof one) < 0) {
    // An eventfd write fails only on counter overflow, which one write cannot reach.
  }
  thread_.join();
}

void PeerWatch::open_pidfds(const std::vector<PeerProcess>& peers, const PeerProcess& self) {
  for (const PeerProcess& p : peers) {
    if (p.rank == self.rank || p.node != self.node || p.pid <= 0) continue;
    const int fd = pidfd_open(p.pid);
    if (fd < 0 && errno == ENOSYS) {  // a kernel before 5.3: no process can be watched
      close_pidfds();
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
}

void PeerWatch::close_pidfds() noexcept {
  for (const Watched& w : watched_)
    if (w.fd >= 0) close(w.fd);
  watched_.clear();
}

void PeerWatch::close_all() noexcept {
  close_pidfds();
  alarm_.reset();
  if (stop_fd_ >= 0) close(stop_fd_);
  stop_fd_ = -1;
}

void PeerWatch::lost_here(const PeerProcess& lost) {
  const Alarm alarm{lost.rank, lost.host, self_rank_};
  const std::function<void()> announce = [&] {
    if (alarm_) alarm_->send(alarm);
  };
  if (!on_lost_(lost, -1, announce) || !alarm_) return;
  for (int i = 1; i < kAlarmSends; ++i) {
    {
      // The pause between sends, cut short when the watch is stopped.
      pollfd stop{stop_fd_, POLLIN, 0};
      if (poll(&stop, 1, kAlarmGapMs) > 0) return;
    }
    alarm_->send(alarm);
  }
}

namespace {

void send_repeated(const PeerAlarm& to, const Alarm& alarm) noexcept {
  for (int i = 0; i < PeerWatch::kAlarmSends; ++i) {
    if (i > 0) {
      const timespec gap{0, PeerWatch::kAlarmGapMs * 1000000L};
      nanosleep(&gap, nullptr);
    }
    to.send(alarm);
  }
}

// The alarms leave_at_exit() keeps for the process's exit. Process-wide because an exit hook
// takes no argument, and never destroyed, so that no destructor of static storage can run before
// the hook that reads it.
struct Departures {
  std::mutex mutex;
  std::vector<std::pair<std::unique_ptr<PeerAlarm>, Alarm>> alarms;
};

Departures& departures() {
  static Departures* const d = [] {
    auto* created = new Departures;
    std::atexit([] {
      Departures& all = departures();
      std::lock_guard lock(all.mutex);
      for (const auto& [to, alarm] : all.alarms) send_repeated(*to, alarm);
    });
    return created;
  }();
  return *d;
}

}  // namespace

void PeerWatch::leave() const noexcept {
  if (!alarm_) return;
  try {
    send_repeated(*alarm_, Alarm{self_rank_, self_host_, self_rank_});
  } catch (...) {
    // Out of memory for the host's copy: the process's end is all the others will see.
  }
}

void PeerWatch::leave_at_exit() noexcept {
  stop_thread();  // it uses alarm_
  if (!alarm_) return;
  try {
    Departures& all = departures();
    std::lock_guard lock(all.mutex);
    all.alarms.emplace_back(std::move(alarm_), Alarm{self_rank_, self_host_, self_rank_});
  } catch (...) {
    // Out of memory: the process's end is all the others will see.
  }
}

void PeerWatch::loop() {
  for (const Watched& w : watched_) {
    if (w.fd < 0) {
      lost_here(w.process);
      return;
    }
  }
  std::vector<pollfd> fds;
  fds.push_back({stop_fd_, POLLIN, 0});
  // -1 (ignored by poll) without an alarm, so that the pidfds keep their place.
  fds.push_back({alarm_ ? alarm_->fd() : -1, POLLIN, 0});
  constexpr std::size_t kFirstPidfd = 2;
  for (const Watched& w : watched_) fds.push_back({w.fd, POLLIN, 0});
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;  // cannot watch any more; the collectives' deadline still applies
    }
    if (fds[0].revents != 0 || reported_alarm(fds)) return;
    for (std::size_t i = kFirstPidfd; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const PeerProcess& ended = watched_[i - kFirstPidfd].process;
      if (ended_as_victim(ended.pid) && alarm_) {
        // It failed after a connection broke (below): the rank lost first is elsewhere, and its
        // node's alarm is on its way. Wait for it (or for a process here that ended otherwise).
        victim_grace(fds, ended);
      } else {
        lost_here(ended);
      }
      return;  // one report: the launcher ends the job anyway
    }
  }
}

bool PeerWatch::reported_alarm(const std::vector<pollfd>& fds) {
  if (fds[1].revents == 0) return false;
  // Anything else that reached the port (another job's alarm, a stray datagram) is dropped.
  const auto alarm = alarm_->receive();
  if (!alarm) return false;
  PeerProcess lost;
  lost.rank = alarm->lost;
  lost.host = alarm->lost_host;
  on_lost_(lost, alarm->reporter, [] {});
  return true;
}

void PeerWatch::victim_grace(std::vector<pollfd>& fds, const PeerProcess& victim) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point until = Clock::now() + std::chrono::milliseconds(kVictimGraceMs);
  constexpr std::size_t kFirstPidfd = 2;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) break;
    for (pollfd& p : fds) p.revents = 0;
    if (poll(fds.data(), fds.size(), static_cast<int>(left)) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0 || reported_alarm(fds)) return;
    for (std::size_t i = kFirstPidfd; i < fds.size(); ++i) {
      const PeerProcess& ended = watched_[i - kFirstPidfd].process;
      if (fds[i].revents == 0 || ended.rank == victim.rank) continue;
      if (!ended_as_victim(ended.pid)) {
        lost_here(ended);
        return;
      }
    }
  }
  lost_here(victim);
}

bool ended_as_victim(std::int64_t pid) {
  // /proc/PID/stat of a zombie: "pid (comm) state ... exit_code" (field 52, Linux 3.5); comm may
  // hold spaces and parentheses, so the fields are counted from the last ')'.
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const auto close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 1));
  std::string state;
  fields >> state;  // field 3
  if (state != "Z") return false;
  std::string field;
  for (int n = 4; n <= 52 && fields >> field; ++n) {
    if (n < 52) continue;
    const auto status = parse_whole_number(field, 0, 0xffff);
    if (!status) return false;
    const int s = static_cast<int>(*status);
    return dtrain::is_victim_status(s);
  }
  return false;
}

}  // namespace dtrain::runtime
