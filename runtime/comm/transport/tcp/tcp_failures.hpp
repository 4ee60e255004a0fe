// A TCP rank's end after a failed collective: the abort frames it sends and reads on the control
// connections (tcp_peers.hpp), the first failure kept and thrown again by every later call, and
// the liveness watch of the shared-memory waits. The diagnosis itself is tcp_loss.hpp's; this
// holds its state and its socket calls, apart from tcp_communicator.cpp, which only reports.
#pragma once

#include <poll.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comm/call_check.hpp"
#include "comm/transport/tcp/tcp_loss.hpp"
#include "comm/transport/tcp/tcp_peers.hpp"
#include "dtrain/dtrain.hpp"
#include "timeout.hpp"

namespace dtrain::runtime {

class TcpFailures {
 public:
  // `peers`, `hosts` (every rank's host name) and `deadline` must outlive this.
  TcpFailures(TcpPeers& peers, int rank, int size, const std::vector<std::string>& hosts,
              const Timeout& deadline);

  // Every failure ends here, and every later call fails with the first one's message: after it
  // this rank's connections are shut, so a later failure would name a peer that did nothing.
  // `what` names the call.
  [[noreturn]] void fail(const Loss& seen, const char* what);
  // Rank `peer`'s message of this call carried `theirs`, another call than this rank's `mine`:
  // the streams are out of step from here on. Every rank is told both calls (the abort frames),
  // then the connections are shut, as after a loss.
  [[noreturn]] void different_call(int peer, const CallHeader& mine, const CallHeader& theirs,
                                   const char* what);
  // Tells every other rank which rank was lost, then shuts every connection: the data streams are
  // out of step after a failed collective, and a peer waiting on this rank sees it go now rather
  // than at its deadline, with the frame that names the real culprit already sent. Connections
  // not accepted yet are placed first, so that they are told too (tcp_peers.hpp, stop_accepting).
  void stop(const Loss& loss);
  // The control connections, while a shared-memory or hierarchical wait needs the ranks
  // `waiting()` returns (read afresh: this node's ranks not yet in the call): a peer whose control
  // connection closed or brought an abort frame, and that the wait still needs, has exited, been
  // killed or stopped because of another rank; fails the call `what` then.
  void watch(const std::function<std::vector<int>()>& waiting, const char* what);

  bool stopped() const { return stopped_; }
  bool failed() const { return failure_.has_value(); }
  // "ranks 1, 2" after a loss, "" otherwise.
  const std::string& missing() const { return missing_; }

 private:
  std::optional<AbortFrame> frame_of(int q, net::Clock::time_point deadline);
  std::vector<int> closed_peers() const;
  Loss cause_of(const Loss& seen);
  std::pair<int, std::optional<AbortFrame>> first_frame_of_open_peers(int skip);
  void send_frames(const Loss& loss);
  // Adds the control connections made since the last look to the watch, in the order of
  // peers_.connected().
  void watch_connected();
  int control(int peer) const { return peers_.control(peer); }

  TcpPeers& peers_;
  int rank_;
  int size_;
  const std::vector<std::string>& hosts_;
  const Timeout& deadline_;
  std::vector<std::optional<AbortFrame>> frames_;  // by rank: the abort frame each peer sent
  std::vector<pollfd> watch_;     // the control connections, for the shared-memory waits
  bool stopped_ = false;          // abort frames sent, connections shut
  std::vector<int> framed_;       // the peers sent an abort frame (at a timeout, at the stop)
  std::optional<Error> failure_;  // the first failure, thrown again by every later call
  std::string missing_;
};

}  // namespace dtrain::runtime
