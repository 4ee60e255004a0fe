#include "comm/transport/mpi/mpi_peer_transport.hpp"

#include <algorithm>
#include <climits>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace {

// Apart from recursive doubling's tag: both run on the same communicator.
constexpr int kPeerTag = 7702;
// A share goes as messages of at most this, under Open MPI's TCP eager limit (btl_tcp_eager_limit,
// 64 KiB with its header by default): a larger message waits for the receiver's answer to a
// request to send (rendezvous), and each answer waits for the receiving process to test its
// requests, which it does between its node's shared-memory steps. Sent eagerly, the bytes flow
// while it is busy.
constexpr std::size_t kMessageBytes = std::size_t{32} << 10;

}  // namespace

MpiPeerTransport::~MpiPeerTransport() {
  // A call abandoned at its deadline leaves requests behind; MPI must not write into freed
  // buffers later, and cancelling a send may block, so they are only dropped from our view.
  for (Slot& s : slots_) s.requests.clear();
}

int MpiPeerTransport::as_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw Error(Error::Code::kInvalid, "dtrain: allreduce: a piece of " + std::to_string(bytes) +
                                           " bytes is too large for MPI");
  }
  return static_cast<int>(bytes);
}

void MpiPeerTransport::send(int slot, const void* buf, std::size_t bytes, int peer) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  const char* data = static_cast<const char*>(buf);
  for (std::size_t at = 0; at < bytes; at += kMessageBytes) {
    s.requests.push_back(MPI_REQUEST_NULL);
    s.peers.push_back(-1);
    check(MPI_Isend(data + at, as_count(std::min(kMessageBytes, bytes - at)), MPI_BYTE, peer,
                    kPeerTag, comm_, &s.requests.back()),
          "allreduce", "MPI_Isend");
  }
}

void MpiPeerTransport::recv(int slot, void* buf, std::size_t bytes, int peer) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  char* data = static_cast<char*>(buf);
  for (std::size_t at = 0; at < bytes; at += kMessageBytes) {
    s.requests.push_back(MPI_REQUEST_NULL);
    s.peers.push_back(peer);
    check(MPI_Irecv(data + at, as_count(std::min(kMessageBytes, bytes - at)), MPI_BYTE, peer,
                    kPeerTag, comm_, &s.requests.back()),
          "allreduce", "MPI_Irecv");
  }
}

bool MpiPeerTransport::done(int slot) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  if (s.requests.empty()) return true;
  // Testsome (not Testall, which completes nothing until all are done) leaves each completed
  // request MPI_REQUEST_NULL, so waiting() can name the peers still missing.
  indices_.resize(s.requests.size());
  int completed = 0;
  check(MPI_Testsome(static_cast<int>(s.requests.size()), s.requests.data(), &completed,
                     indices_.data(), MPI_STATUSES_IGNORE),
        "allreduce", "MPI_Testsome");
  for (MPI_Request r : s.requests)
    if (r != MPI_REQUEST_NULL) return false;
  s.requests.clear();
  s.peers.clear();
  return true;
}

std::vector<int> MpiPeerTransport::waiting(int slot) const {
  const Slot& s = slots_[static_cast<std::size_t>(slot)];
  std::vector<int> peers;
  for (std::size_t i = 0; i < s.peers.size(); ++i) {
    if (s.peers[i] >= 0 && s.requests[i] != MPI_REQUEST_NULL) peers.push_back(s.peers[i]);
  }
  std::sort(peers.begin(), peers.end());  // a share is several messages
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

void MpiPeerTransport::progress() {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].requests.empty()) {
      done(static_cast<int>(i));
      return;  // one test drives MPI's progress engine for every pending message
    }
  }
}

}  // namespace dtrain::runtime
