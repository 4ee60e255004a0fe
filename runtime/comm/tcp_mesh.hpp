// The TCP backend's connections (tcp_communicator.cpp): every pair of ranks connected twice, a
// data connection and a control connection that carries only abort frames (tcp_loss.hpp), set up
// through addresses published in the job's store. Apart from the collectives, which only use the
// sockets, and tested through them.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bootstrap/store.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {

struct TcpMesh {
  std::vector<net::Socket> data;     // by rank; this rank's own is invalid
  std::vector<net::Socket> control;  // abort frames only, by rank
  std::vector<std::string> nodes;    // every rank's node (host) name
};

// Connects rank `rank` of `size` to every other rank (collective: every rank calls it) within
// `timeout`: lower ranks accept, higher ranks connect. `node_name`: the node this rank announces
// ("": this host's name), so that tests can place the ranks of one process on several nodes.
// Throws Error (kComm/kTimeout) naming the rank that never published its address or connected.
TcpMesh connect_tcp_mesh(Store& store, int rank, int size, std::chrono::milliseconds timeout,
                         const std::string& node_name);

}  // namespace dtrain::runtime
