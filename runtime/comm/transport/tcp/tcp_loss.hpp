// Which rank a failed TCP collective lost, and the message that names it. A rank that stops
// because of a lost peer tells the others in an abort frame; a rank that then sees the messenger
// go follows the frames back to the rank really lost, so the message names the culprit and not
// the rank that passed the news on. The socket reads stay in tcp_communicator.cpp: here the
// frames arrive through a callback, so the diagnosis is unit-tested without sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/call_check.hpp"
#include "common/words.hpp"
#include "net/socket.hpp"
#include "timeout.hpp"

namespace dtrain::runtime {

// Host byte order, as the store's frames: every rank of a job runs the same build.
inline constexpr std::uint32_t kAbortMagic = 0x64744162;  // "dtAb"
struct AbortFrame {
  std::uint32_t magic = kAbortMagic;
  std::int32_t lost = -1;  // the rank first found lost; with kMismatch, the rank that saw it
  std::int32_t how = 0;    // IoResult: kClosed, kTimeout, kError or kMismatch
  std::int32_t error = 0;  // errno, with kError
  // With kMismatch: the two calls that differed (call_check.hpp), so that every rank names both.
  std::int32_t call_rank[2] = {-1, -1};
  std::uint64_t call_count[2] = {0, 0};
  std::uint64_t call_what[2] = {0, 0};
};

// Why a collective failed: the rank found lost first and how, and the peer that reported it when
// this rank learned it from an abort frame rather than saw it itself.
// With kMismatch no rank is lost: `rank` saw two ranks pass different calls, `calls`.
struct Loss {
  int rank = -1;
  net::IoResult how = net::IoResult::kClosed;
  int error = 0;
  int messenger = -1;
  std::vector<CallSeen> calls{};
};

// The frame a rank sends for `loss`, and the loss a frame tells of, its sender the messenger.
AbortFrame frame_of_loss(const Loss& loss);
Loss loss_of_frame(const AbortFrame& f, int messenger);

// Whether `f` is an intact frame telling that ranks passed different calls (of a job of `size`).
bool tells_mismatch(const std::optional<AbortFrame>& f, int size);

// The abort frame rank `peer` sent, or nullopt when none came (in time, or intact).
using FrameReader = std::function<std::optional<AbortFrame>(int peer)>;

// `seen`: the peer this rank (`self` of `size`) found gone or silent. When that peer had stopped
// because of another rank, its frame names that rank: the cause, with the peer as the messenger;
// and when that rank in turn waited on another, its frame goes on (3 ranks in a ring, 1 stopped:
// 0 waits on 2, which waits on 1). Each rank is asked once, so a cycle of frames ends.
// `closed`: the other peers whose connections closed. When the peer seen closed sent no frame, it
// may have stopped before it held a connection to this rank to send one on (this rank's connect
// still in its backlog: 64 ranks, one killed, 1 run in 8), so the first frame of those peers that
// names a lost rank (not a silent one) is followed instead.
Loss cause_of(const Loss& seen, int self, int size, const FrameReader& read_frame,
              const std::vector<int>& closed = {});

// The ranks a failure leaves missing, sorted: the lost rank and its messenger, and `closed` (the
// peers whose connections are closed now: a failure spreads) unless the lost rank was silent and
// seen by this rank itself, when only it is known missing. None for a mismatch.
std::vector<int> missing_ranks(const Loss& loss, const std::vector<int>& closed);

// "dtrain: <what>: tcp: missing ranks: 1, 2; rank 1 (on hostB) closed its connection (it exited
// or was killed); rank 2 (on hostC) stopped because of it", or "... rank 1 (on hostB) did not
// answer within 5 s (DTRAIN_TIMEOUT)" (`timeout`: the deadline). `hosts`: every rank's host name.
// For a mismatch: "dtrain: <what>: tcp: ranks passed different calls to one collective: ...; rank 2
// (on hostC) saw it" (the last part on the other ranks).
std::string loss_message(const char* what, const Loss& loss, const std::vector<int>& missing,
                         const std::vector<std::string>& hosts, const Timeout& timeout);

}  // namespace dtrain::runtime
