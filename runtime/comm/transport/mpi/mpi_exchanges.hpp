// What the MPI backend's ranks tell each other once, at start, over MPI: this node's processes
// (for the Engine's PeerWatch), every rank's peer-alarm endpoint, every rank's mailbox address.
// Apart from mpi_communicator.cpp, which only keeps what they return.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/lost_peers/peer_alarm.hpp"
#include "comm/lost_peers/peer_watch.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "mpi/mpi_api.hpp"

namespace dtrain::runtime {

// The ranks sharing this node (`node`, from MPI_Comm_split_type) tell each other their processes.
// Collective over `node`.
std::vector<PeerProcess> exchange_node_processes(MPI_Comm node, int rank, const std::string& host);

// Every rank's UDP port and host, and rank 0's token, for the peer alarm: a rank whose watch sees
// a process of this node end tells the ranks that cannot see it. None where this rank would tell
// nobody or has no socket. `alarm_fd`: the logger's socket (Settings::alarm_fd). Collective over
// `comm`, after exchange_node_processes.
std::unique_ptr<PeerAlarm> exchange_alarm_endpoints(MPI_Comm comm, int rank, int size,
                                                    const std::string& host,
                                                    const std::vector<PeerProcess>& node_processes,
                                                    const std::optional<std::string>& alarm_fd);

// Point-to-point messages: the mailbox's sockets (MPI's calls stay on the progress thread), their
// addresses gathered over MPI. Collective over `comm`. `rings`: within a node through
// shared-memory rings (Settings::shm_messages).
std::unique_ptr<Mailbox> exchange_mailbox_addresses(MPI_Comm comm, int rank, int size,
                                                    const std::string& host,
                                                    std::chrono::milliseconds timeout, bool rings);

}  // namespace dtrain::runtime
