// What the mailbox does when a connection ends or a peer is lost (mailbox.hpp): the messages in
// flight with it fail, and the receives from it fail once nothing it sent can still arrive; kept
// apart from the loop that reads and writes (mailbox_io.cpp), which calls these.
#include <algorithm>
#include <string>

#include "comm/point_to_point/mailbox.hpp"
#include "comm/point_to_point/mailbox_parts.hpp"

namespace dtrain::runtime {

void Mailbox::settle(int peer) {
  const bool may_read = std::any_of(incoming_.begin(), incoming_.end(), [&](const auto& in) {
    return in->socket.valid() && (in->source == peer || in->source < 0);
  });
  if (!may_read) {
    fail_receives_from(peer);
  } else if (std::find(unsettled_.begin(), unsettled_.end(), peer) == unsettled_.end()) {
    unsettled_.push_back(peer);
  }
}

void Mailbox::drop_incoming(Incoming& in, const std::string& why) {
  in.socket = net::Socket();
  if (in.source < 0) return;  // before its hello: nothing of it was in flight
  if (in.target) {
    finish(*in.target, describe(*in.target) + ": " + who(in.source, in.target->group_of) + " " +
                           why + " " + std::to_string(in.got) + " bytes into the message");
    in.target.reset();
  }
  // A message it had begun, or was holding back, never completes.
  std::erase_if(unclaimed_, [&](const std::shared_ptr<Unclaimed>& u) {
    if (u->reading != &in && u->parked != &in) return false;
    unclaimed_bytes_ -= u->data.size();
    u->keep_after.reset();  // no longer parked_'s
    return true;
  });
  in.keep.reset();
  Gone& gone = gone_[static_cast<std::size_t>(in.source)];
  if (gone.why.empty()) gone.why = " " + why + " before sending a message this receive waits for";
  // Receives from that rank alone never complete now; messages it sent whole stay claimable.
  fail_receives_from(in.source);
}

void Mailbox::drop_outgoing(Outgoing& out, const std::string& why) {
  complete_taken(out);  // taken before the end: that send succeeded
  out.socket = net::Socket();
  if (out.ring && !out.ring_opened) PosixShm::unlink(out.ring->name());
  out.ring.reset();  // a message half in it cannot be followed by another
  out.awaiting = false;
  out.framing = false;
  out.watches = false;  // never connected again
  Gone& gone = gone_[static_cast<std::size_t>(out.peer)];
  if (gone.why.empty()) gone.why = ": " + why;
  for (const auto& op : out.queue) finish(*op, describe(*op) + ": " + gone_text(*op));
  out.queue.clear();
  // Its listener refused, or the connection ended: the peer is gone (or destroyed its
  // communicator), and the receives from it wait in vain (an alltoallv's, with its send).
  settle(out.peer);
}

void Mailbox::fail_receives_from(int peer) {
  std::erase_if(posted_, [&](const std::shared_ptr<Op>& op) {
    if (op->peer != peer) return false;
    finish(*op, describe(*op) + ": " + gone_text(*op));
    return true;
  });
}

void Mailbox::peer_lost(int peer, const std::string& text) {
  std::lock_guard lock(mutex_);
  if (peer < 0 || peer >= size_ || peer == rank_) return;
  Gone& gone = gone_[static_cast<std::size_t>(peer)];
  if (gone.why.empty()) gone = {text, true};
  if (const auto& out = outgoing_[static_cast<std::size_t>(peer)]) {
    complete_taken(*out);
    for (const auto& op : out->queue) finish(*op, describe(*op) + ": " + gone_text(*op));
    out->queue.clear();
  }
  settle(peer);
}

}  // namespace dtrain::runtime
