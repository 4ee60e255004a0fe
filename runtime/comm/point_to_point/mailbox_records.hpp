// The mailbox's addresses for a backend with no address table of its own (MPI): each rank listens
// on a free port and describes it in a record of fixed size, which the backend's allgather brings
// to every rank (the TCP backend publishes the port in its own table instead, tcp_peers.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "comm/point_to_point/mailbox.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {

// Room for the longest host name DNS allows (253 characters), a port and a key.
inline constexpr std::size_t kMailboxRecordBytes = 288;

struct MailboxListener {
  net::Socket socket;
  std::string record;  // kMailboxRecordBytes: where `socket` listens on `host`, and the node
};

// Listens on every interface, on a port the system picks; `host`: the name peers connect to (the
// node's, which every rank resolves). Throws Error (kSystem) naming the cause, and (kInvalid) for
// a host name longer than a record holds.
MailboxListener listen_for_messages(const std::string& host);
// Every rank's address from `size` records laid end to end; throws Error (kComm) naming a rank
// whose record is not one.
std::vector<MailboxAddress> read_mailbox_records(const char* all, int size);

}  // namespace dtrain::runtime
