#include "comm/transport/tcp/tcp_failures.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "common/words.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {
namespace {

using net::Clock;
using net::IoResult;

// How long a rank that saw a peer close waits for that peer's abort frame: a peer that closed
// has closed its control connection too, so this waits only for bytes already on their way.
constexpr auto kFrameWait = std::chrono::seconds(1);
// How long a rank whose peer did not answer waits for that peer's frame: the peer may itself be
// waiting on another rank (a ring passes data on), and its deadline, begun with the same
// collective, passes at about the same moment. Kept well under the Engine's 2 s grace.
constexpr auto kSilentFrameWait = std::chrono::milliseconds(500);
// How long a rank whose peer closed without a frame waits for any other peer's frame: the ranks
// that met the same odd call stop at about the same moment, each within its own step.
constexpr auto kOpenPeerFrameWait = std::chrono::milliseconds(500);

}  // namespace

TcpFailures::TcpFailures(TcpPeers& peers, int rank, int size, const std::vector<std::string>& hosts,
                         const Timeout& deadline)
    : peers_(peers),
      rank_(rank),
      size_(size),
      hosts_(hosts),
      deadline_(deadline),
      frames_(static_cast<std::size_t>(size)) {}

void TcpFailures::different_call(int peer, const CallHeader& ours, const CallHeader& theirs,
                                 const char* what) {
  if (failure_) throw *failure_;
  CallSeen mine{rank_, ours.count, CallWhat::unpack(ours.what)};
  CallSeen other{peer, theirs.count, CallWhat::unpack(theirs.what)};
  Loss loss{rank_, IoResult::kMismatch, 0, -1};
  loss.calls =
      peer < rank_ ? std::vector<CallSeen>{other, mine} : std::vector<CallSeen>{mine, other};
  stop(loss);
  missing_.clear();
  failure_.emplace(Error::Code::kInvalid, loss_message(what, loss, {}, hosts_, deadline_));
  throw *failure_;
}

void TcpFailures::watch(const std::function<std::vector<int>()>& waiting_now, const char* what) {
  watch_connected();
  if (::poll(watch_.data(), watch_.size(), 0) <= 0) return;
  for (std::size_t i = 0; i < watch_.size(); ++i) {
    if (watch_[i].revents == 0) continue;
    const int q = peers_.connected()[i];
    // A peer may post its last piece and exit: it is missing only if the wait, re-read after
    // seeing the closed connection, still needs it.
    const std::vector<int> waiting = waiting_now();
    const auto needed = [&](int r) {
      return std::find(waiting.begin(), waiting.end(), r) != waiting.end();
    };
    if (needed(q)) fail(Loss{q, IoResult::kClosed, 0, -1}, what);
    // A peer this wait does not need stopped: its abort frame names the rank it lost, which this
    // wait may need (on a host of many ranks only a few are connected to the one that died).
    // Not a silent one: this rank's own deadline, begun with the same call, names that one.
    // The peer stays watched: the wait may need it later.
    // Ranks that passed different calls stop every rank.
    const std::optional<AbortFrame> f = frame_of(q, Clock::now());
    if (f && f->how == static_cast<std::int32_t>(IoResult::kMismatch))
      fail(loss_of_frame(*f, q), what);
    if (f && f->how != static_cast<std::int32_t>(IoResult::kTimeout) && needed(f->lost)) {
      fail(loss_of_frame(*f, q), what);
    }
  }
}

void TcpFailures::watch_connected() {
  const std::vector<int>& connected = peers_.connected();
  for (std::size_t i = watch_.size(); i < connected.size(); ++i) {
    watch_.push_back({control(connected[i]), POLLIN | POLLRDHUP, 0});
  }
}

// The abort frame peer `q` sent, read once and kept (the liveness watch may read it before the
// diagnosis asks for it); nullopt when none came by `deadline`.
std::optional<AbortFrame> TcpFailures::frame_of(int q, Clock::time_point deadline) {
  auto& kept = frames_[static_cast<std::size_t>(q)];
  // A peer that connected to this rank, which had not accepted it yet, and then stopped.
  if (!kept && control(q) < 0 && q > rank_) peers_.accept_waiting(deadline);
  if (!kept && control(q) >= 0) {
    AbortFrame f;
    if (net::recv_all(control(q), &f, sizeof f, deadline) == IoResult::kOk) kept = f;
  }
  return kept;
}

// Every peer whose connection is closed now: the dead rank, and ranks that already stopped
// because of it (a failure spreads). Looked at only after a failure.
std::vector<int> TcpFailures::closed_peers() const {
  std::vector<int> out;
  for (int q : peers_.connected()) {
    pollfd p{peers_.data(q), POLLRDHUP, 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) out.push_back(q);
  }
  return out;
}

// The rank really lost behind `seen` (tcp_loss.hpp), from the abort frames on the control
// connections.
Loss TcpFailures::cause_of(const Loss& seen) {
  const auto deadline =
      Clock::now() + (seen.how == IoResult::kClosed ? kFrameWait : kSilentFrameWait);
  const Loss cause = runtime::cause_of(
      seen, rank_, size_, [&](int peer) { return frame_of(peer, deadline); }, closed_peers());
  // A peer this rank never held a control connection to, gone with no frame: killed, or a rank
  // that met another call than the others before this rank connected to it (so it held no
  // connection to tell this rank on). Its partners then stop with the calls in their frames: the
  // first frame of a connected peer that has not closed yet says which (docs/errors.md: a first
  // collective's mismatch). Not for a peer this rank was connected to: a killed rank's peers
  // would each wait for the others' frames, which they send only after their own wait, while
  // a launcher (srun --kill-on-bad-exit) ends them (multinode_hierarchical_faults, 1 run).
  if (cause.rank != seen.rank || cause.how != IoResult::kClosed || cause.messenger >= 0 ||
      control(seen.rank) >= 0) {
    return cause;
  }
  const auto [sender, told] = first_frame_of_open_peers(seen.rank);
  return tells_mismatch(told, size_) ? loss_of_frame(*told, sender) : cause;
}

// The first abort frame any connected peer but `skip` sends within kOpenPeerFrameWait, and its
// sender; nullopt if none. Read only after a peer never connected closed with no frame: a
// healthy peer sends none, so the wait is paid once, by a rank that is failing anyway.
std::pair<int, std::optional<AbortFrame>> TcpFailures::first_frame_of_open_peers(int skip) {
  std::vector<pollfd> fds;
  std::vector<int> ranks;
  for (int q : peers_.connected()) {
    if (q == skip || control(q) < 0) continue;
    if (frames_[static_cast<std::size_t>(q)]) return {q, frames_[static_cast<std::size_t>(q)]};
    fds.push_back({control(q), POLLIN, 0});
    ranks.push_back(q);
  }
  const auto until = Clock::now() + kOpenPeerFrameWait;
  while (!fds.empty()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0 || ::poll(fds.data(), fds.size(), static_cast<int>(left)) <= 0) break;
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (fds[i].revents == 0) continue;
      if (std::optional<AbortFrame> f = frame_of(ranks[i], until)) return {ranks[i], f};
      // Closed with no frame: nothing more comes from it.
      fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(i));
      ranks.erase(ranks.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return {-1, std::nullopt};
}

void TcpFailures::stop(const Loss& loss) {
  if (stopped_) return;
  stopped_ = true;
  peers_.stop_accepting();
  send_frames(loss);
  peers_.shut_all();
}

// Tells every peer it holds a control connection to, but the lost one, whom this rank lost;
// once each (a peer reads one frame): a rank that timed out told its peers at once, and tells
// those it placed since when it stops.
void TcpFailures::send_frames(const Loss& loss) {
  const AbortFrame f = frame_of_loss(loss);
  for (int q : peers_.held()) {
    const bool told = std::find(framed_.begin(), framed_.end(), q) != framed_.end();
    if (q == loss.rank || control(q) < 0 || told) continue;
    framed_.push_back(q);
    // Nothing else is ever sent on a control connection, so the frame fits in its buffer; to
    // a peer that is gone already the send just fails.
    ::send(control(q), &f, sizeof f, MSG_NOSIGNAL);
  }
}

void TcpFailures::fail(const Loss& seen, const char* what) {
  if (failure_) throw *failure_;
  // A silent peer: say at once whom this rank waited for, so that a rank waiting on this one
  // finds the frame while it waits for it (cause_of), then look for the cause.
  if (seen.how == IoResult::kTimeout) send_frames(seen);
  const Loss loss = cause_of(seen);
  const std::vector<int> missing = runtime::missing_ranks(loss, closed_peers());
  missing_ = "ranks " + join_ranks(missing);
  stop(loss);
  const std::string text = loss_message(what, loss, missing, hosts_, deadline_);
  failure_.emplace(loss.how == IoResult::kTimeout    ? Error::Code::kTimeout
                   : loss.how == IoResult::kMismatch ? Error::Code::kInvalid
                                                     : Error::Code::kComm,
                   text);
  throw *failure_;
}

}  // namespace dtrain::runtime
