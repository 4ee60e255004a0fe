// What the TCP communicator's tests share (tcp_communicator_test.cpp, one node; and
// tcp_communicator_nodes_test.cpp, several nodes and many ranks): ranks as threads over the
// in-memory store.
#pragma once

#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "bootstrap/store.hpp"
#include "comm/engine.hpp"
#include "comm/transport/tcp/tcp_communicator.hpp"
#include "threads_as_ranks.hpp"

namespace dtrain::test {

inline dtrain::runtime::Settings settings(bool shm) {
  dtrain::runtime::Settings s;
  s.timeout = std::chrono::seconds(30);
  s.shm = shm;
  return s;
}

inline std::unique_ptr<dtrain::runtime::Communicator> connect(
    const std::shared_ptr<dtrain::runtime::Store>& store, int rank, int size, bool shm) {
  dtrain::runtime::PrefixStore tcp(store, "tcp");
  return dtrain::runtime::make_tcp_communicator(tcp, rank, size, settings(shm));
}

inline std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// Ranks on several nodes (named per rank: threads of this process), connected over loopback:
// the hierarchical allreduce with one shared-memory object per node and the shares between nodes
// over the sockets. Integer-valued data, so every path gives the exact sum.
inline std::unique_ptr<dtrain::runtime::Communicator> on_node(
    const std::shared_ptr<dtrain::runtime::Store>& store, int rank, int size, int per_node,
    dtrain::runtime::AllreduceAlgo algo,
    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  dtrain::runtime::PrefixStore tcp(store, "tcp");
  dtrain::runtime::Settings s = settings(true);
  s.algo = algo;
  s.timeout = timeout;
  return dtrain::runtime::make_tcp_communicator(tcp, rank, size, s,
                                                "node" + std::to_string(rank / per_node));
}

// `size` ranks as threads, each with its engine and public Comm over the TCP backend (no shared
// memory: the sockets carry everything).
inline void tcp_comm_ranks(int size, const std::function<void(dtrain::Comm&, int rank)>& body,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  auto store = dtrain::runtime::make_memory_store();
  threads_as_ranks(size, [&](int rank) {
    dtrain::runtime::Settings s = settings(false);
    s.timeout = timeout;
    dtrain::runtime::PrefixStore tcp(store, "tcp");
    dtrain::runtime::Engine engine(dtrain::runtime::make_tcp_communicator(tcp, rank, size, s), rank,
                                   size, s);
    dtrain::Comm comm(engine);
    body(comm, rank);
  });
}

}  // namespace dtrain::test
