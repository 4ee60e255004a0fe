// The peer alarm's socket, held by a rank's logger (`dtrain run-rank`, the SPANK plugin) and handed
// to the rank. A rank whose TCP connection to a lost peer breaks can be ended by its MPI library
// at once (Open MPI 4.1's TCP transport aborts the process, in about a millisecond), before the
// alarm of the rank that saw the peer end reaches it: its log then named nobody (5 of 6 runs of a
// 2x2 job with 1 MiB allreduces; the logger's answer is pinned by RankAlarmTee.
// ARankThatFailedBeforeReportingALossHasItReportedByItsLogger). The logger outlives
// its rank by the time the launcher takes to kill the step, and the alarm is sent to the rank's
// socket several times: with the socket still open in the logger, the later datagrams wait there,
// and the logger writes the rank's report for it. One socket per rank, as the rank would have bound
// anyway.
#pragma once

#include <optional>

#include "common/alarm_datagram.hpp"

namespace dtrain::records {

class RankAlarmSocket {
 public:
  // An IPv4 UDP socket bound to any port, close-on-exec; without one (out of descriptors, no
  // IPv4) fd() is -1 and the rank binds its own.
  static RankAlarmSocket open() noexcept;
  RankAlarmSocket() = default;
  RankAlarmSocket(RankAlarmSocket&& other) noexcept;
  RankAlarmSocket& operator=(RankAlarmSocket&& other) noexcept;
  RankAlarmSocket(const RankAlarmSocket&) = delete;
  RankAlarmSocket& operator=(const RankAlarmSocket&) = delete;
  ~RankAlarmSocket();

  int fd() const { return fd_; }
  // In the child that becomes the rank (before exec): the descriptor stays open across exec and
  // kAlarmFdVariable names it. Async-signal-safe but for setenv (a forked child of one thread).
  void hand_to_child() const noexcept;
  // Gives the descriptor up (the child that goes on as the rank keeps it open).
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  explicit RankAlarmSocket(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Waits up to `ms` for an alarm of a job of `world_size` on `fd` that names another rank than
// `self` (the lost rank's own socket is told too); any datagram that is not one is dropped.
std::optional<Alarm> wait_for_alarm(int fd, int self, int world_size, int ms) noexcept;

// The line a logger writes for its rank ended before it reported `alarm`.
std::string alarm_line_for_rank(int rank, const Alarm& alarm);

}  // namespace dtrain::records
