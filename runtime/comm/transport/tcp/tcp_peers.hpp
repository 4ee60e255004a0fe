// The TCP backend's connections (tcp_communicator.cpp), made when a collective first needs them
// and only to the peers its algorithms use: the ring's neighbours, recursive doubling's and the
// broadcast tree's partners, the node's members, the hierarchy's peers on other nodes. That is
// O(log N) peers per rank, never the full mesh, which at 1,024 ranks would hold about 3,100
// descriptors per rank and 3 million in the job (more than a machine's fs.file-max).
//
// Each connected pair has two connections: one for data, and a control connection that carries
// only abort frames (tcp_loss.hpp), read after a failure. A rank that fails sends a frame on every
// control connection it has and shuts them all, so the news of a lost rank spreads along the
// connections to every rank that waits, however few each rank holds.
//
// Addresses are gathered once, in O(N) store work: every rank publishes its own, rank 0 reads them
// all in one store request and publishes the table, and every rank reads the table (torchelastic's
// per-pair look-ups were O(N^2) and took 373 s for 4,000 hosts, pytorch/pytorch#124982).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/store.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {

class TcpPeers {
 public:
  // Publishes this rank's address and reads every rank's (collective: every rank calls it) within
  // `timeout`. `node_name`: the node this rank announces ("": this host's name), so that tests can
  // place the ranks of one process on several nodes. Throws Error (kTimeout) naming the ranks that
  // never published their address.
  TcpPeers(Store& store, int rank, int size, std::chrono::milliseconds timeout,
           const std::string& node_name);

  // How making a connection ended: kOk, or the peer that stopped it (the peer asked for, or a
  // connected one whose control connection closed or brought an abort frame while this rank
  // waited) and how.
  struct Outcome {
    net::IoResult how = net::IoResult::kOk;
    int peer = -1;
    int error = 0;
  };

  // Connects this rank to every rank of `peers` it is not connected to yet. Both ranks of a pair
  // must ask for each other in the same collective (every pattern of the backend is symmetric):
  // the higher rank connects and the lower accepts, and every rank makes its own connections
  // before it waits to accept, so no rank waits on another's progress but its peers' start.
  Outcome connect(const std::vector<int>& peers, net::Clock::time_point deadline);

  // Places the connections that higher ranks made and this rank has not accepted yet, without
  // waiting for more: a peer that connected, then stopped, wrote its abort frame on one of them
  // (a lower rank accepts only when a collective needs the peer, so it may not have yet).
  void accept_waiting(net::Clock::time_point deadline);

  // After a failure (the communicator's stop): places what higher ranks connected and this rank
  // never accepted (waiting briefly for each one's hello), so that they are told and shut too,
  // then closes the listening socket, so that a connection made later is refused at once. A peer
  // whose connection waited in the queue of a rank that had stopped waited on it until that
  // process exited or the deadline passed (4 ranks, one killed, 1 run in 30 under load: rank 2
  // silent until Slurm's kill of the step).
  void stop_accepting();
  // Every peer this rank holds a connection to: those of connected(), then those of which only one
  // connection is in (the other still on its way when this rank stopped accepting). A scan of
  // every rank: for the failure path only.
  std::vector<int> held() const;
  // Shuts every connection held: data both ways, control for sending only (a frame sent on it
  // stays readable by the peer).
  void shut_all();

  // The connections to `peer`, -1 when not connected.
  int data(int peer) const { return data_[static_cast<std::size_t>(peer)].fd(); }
  int control(int peer) const { return control_[static_cast<std::size_t>(peer)].fd(); }
  // The peers connected, in the order their connections were made.
  const std::vector<int>& connected() const { return connected_; }
  // Every rank's node (host) name, by rank.
  const std::vector<std::string>& nodes() const { return nodes_; }
  // Where every rank's point-to-point mailbox listens, by rank, and this rank's listener for it
  // (once: the mailbox takes it).
  std::vector<MailboxAddress> mailbox_addresses() const;
  net::Socket take_mailbox_listener() { return std::move(mail_listener_); }

 private:
  Outcome connect_to(int peer, net::Clock::time_point deadline);
  // Accepts connections, of any peer, until both of `peer`'s are in.
  Outcome accept_from(int peer, net::Clock::time_point deadline);
  void place(net::Socket s, net::Clock::time_point deadline);
  bool complete(int peer) const { return data(peer) >= 0 && control(peer) >= 0; }

  int rank_;
  int size_;
  net::Socket listener_;
  net::Socket mail_listener_;  // the mailbox's, until it takes it
  // What every connection to either listener brings in its hello (peer_address.hpp): a stranger's
  // is dropped.
  std::uint64_t key_;
  std::vector<std::string> hosts_;  // where each rank listens
  std::vector<int> ports_;
  std::vector<int> mail_ports_;
  std::vector<std::uint64_t> keys_;  // each rank's key_
  std::vector<std::string> nodes_;
  // By rank (an invalid Socket where not connected): N small objects, the descriptors only for
  // the peers in connected_.
  std::vector<net::Socket> data_;
  std::vector<net::Socket> control_;
  std::vector<int> connected_;
};

}  // namespace dtrain::runtime
