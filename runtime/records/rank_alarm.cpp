#include "records/rank_alarm.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace dtrain::records {

RankAlarmSocket RankAlarmSocket::open() noexcept {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0) {
    ::close(fd);
    return {};
  }
  return RankAlarmSocket(fd);
}

RankAlarmSocket::RankAlarmSocket(RankAlarmSocket&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

RankAlarmSocket& RankAlarmSocket::operator=(RankAlarmSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RankAlarmSocket::~RankAlarmSocket() {
  if (fd_ >= 0) ::close(fd_);
}

void RankAlarmSocket::hand_to_child() const noexcept {
  if (fd_ < 0) return;
  if (::fcntl(fd_, F_SETFD, 0) != 0) return;
  char text[16];
  std::snprintf(text, sizeof text, "%d", fd_);
  ::setenv(kAlarmFdVariable, text, 1);
}

std::optional<Alarm> wait_for_alarm(int fd, int self, int world_size, int ms) noexcept {
  if (fd < 0 || world_size <= 0) return std::nullopt;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point until = Clock::now() + std::chrono::milliseconds(ms);
  char buf[kMaxAlarmDatagram];
  for (;;) {
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;  // nothing more waiting
      try {
        const auto alarm = decode_alarm(std::string_view(buf, static_cast<std::size_t>(n)),
                                        std::nullopt, world_size);
        if (alarm && alarm->lost != self) return alarm;
      } catch (...) {
        return std::nullopt;  // out of memory for the host name
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) < 0 && errno != EINTR) return std::nullopt;
  }
}

std::string alarm_line_for_rank(int rank, const Alarm& alarm) {
  return "dtrain: rank " + std::to_string(rank) +
         " ended before it could report what its logger then heard: " +
         lost_peer_text(alarm.lost, alarm.lost_host, alarm.reporter);
}

}  // namespace dtrain::records
