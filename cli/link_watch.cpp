#include "link_watch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "common/input_file.hpp"

namespace dtrain::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::array<const char*, 2> kProbePorts = {"6818", "22"};
// Sockets open at once: well under the usual 1,024 descriptors, whatever the node count.
constexpr std::size_t kBatch = 256;
constexpr std::string_view kReachPrefix = "reach-";

// Connected, or refused: the host answered.
bool answered(int error) { return error == 0 || error == ECONNREFUSED; }

// A reach record is one line naming the node's peers: far below this even at thousands of nodes.
constexpr std::size_t kMaxReachBytes = 1 << 20;

}  // namespace

std::vector<bool> hosts_answer(const std::vector<std::string>& hosts,
                               std::chrono::milliseconds limit) {
  std::vector<bool> result(hosts.size(), false);
  // (host index, socket) of the connections in flight.
  std::vector<std::pair<std::size_t, int>> pending;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const auto wait_all = [&] {
    std::vector<pollfd> fds;
    while (!pending.empty()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      fds.clear();
      for (const auto& p : pending) fds.push_back({p.second, POLLOUT, 0});
      if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) {
        break;
      }
      std::vector<std::pair<std::size_t, int>> still;
      for (std::size_t k = 0; k < fds.size(); ++k) {
        if (fds[k].revents == 0) {
          still.push_back(pending[k]);
          continue;
        }
        int error = 0;
        socklen_t size = sizeof error;
        ::getsockopt(pending[k].second, SOL_SOCKET, SO_ERROR, &error, &size);
        if (answered(error)) result[pending[k].first] = true;
        ::close(pending[k].second);
      }
      pending = std::move(still);
    }
    for (const auto& p : pending) ::close(p.second);
    pending.clear();
  };
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    for (const char* port : kProbePorts) {
      if (result[i]) break;
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
      if (::getaddrinfo(hosts[i].c_str(), port, &hints, &found) != 0 || found == nullptr) break;
      const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                              found->ai_protocol);
      if (fd >= 0) {
        if (::connect(fd, found->ai_addr, found->ai_addrlen) == 0 || answered(errno)) {
          result[i] = true;
          ::close(fd);
        } else if (errno == EINPROGRESS) {
          pending.emplace_back(i, fd);
        } else {
          ::close(fd);  // unreachable at once (no route)
        }
      }
      ::freeaddrinfo(found);
    }
    if (pending.size() >= kBatch) wait_all();
  }
  wait_all();
  return result;
}

LinkWatch::LinkWatch(std::string live_dir, std::string host)
    : live_dir_(std::move(live_dir)), host_(std::move(host)) {
  claim_path_ = (fs::path(live_dir_) / (std::string(kReachPrefix) + host_ + ".claim")).string();
  record_path_ = (fs::path(live_dir_) / (std::string(kReachPrefix) + host_ + ".txt")).string();
}

LinkWatch::~LinkWatch() { forget(); }

void LinkWatch::forget() {
  tried_ = false;
  if (!claimed_) return;
  ::unlink(record_path_.c_str());
  ::unlink(claim_path_.c_str());
  claimed_ = false;
}

void LinkWatch::probe_once(const std::vector<report::RankWait>& waits) {
  if (tried_) return;
  tried_ = true;
  // With 2 nodes each misses the other alike: the records could not tell the sides apart.
  if (report::hosts_of(waits).size() < 3) return;
  // O_EXCL: one logger of the node probes, whichever sees every rank waiting first.
  const int fd = ::open(claim_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ::close(fd);
  claimed_ = true;
  report::NodeReach reach{host_, {}, {}};
  std::vector<std::string> others;
  for (const std::string& h : report::hosts_of(waits)) {
    if (h != host_) others.push_back(h);
  }
  const std::vector<bool> up = hosts_answer(others, report::kProbeLimit);
  for (std::size_t i = 0; i < others.size(); ++i) {
    (up[i] ? reach.answered : reach.silent).push_back(others[i]);
  }
  const std::string tmp = record_path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << report::format_reach(reach);
  }
  // Renamed into place: a reader never sees half a line.
  if (::rename(tmp.c_str(), record_path_.c_str()) != 0) ::unlink(tmp.c_str());
}

std::vector<report::NodeReach> LinkWatch::read() const {
  std::vector<report::NodeReach> records;
  DIR* d = ::opendir(live_dir_.c_str());
  if (d == nullptr) return records;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (!name.starts_with(kReachPrefix) || !name.ends_with(".txt")) continue;
    // Through the run directory's one reader (common/input_file.hpp): a FIFO or /dev/zero under
    // that name must not stop the hang watch. A record that cannot be read is left out.
    try {
      const auto text =
          read_input_file_if_present((fs::path(live_dir_) / std::string(name)).string(),
                                     "a node's reach record", kMaxReachBytes);
      if (!text) continue;
      if (auto r = report::parse_reach(*text)) records.push_back(std::move(*r));
    } catch (const InputFileError&) {
    }
  }
  ::closedir(d);
  return records;
}

}  // namespace dtrain::cli
