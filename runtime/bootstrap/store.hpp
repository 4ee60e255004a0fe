// The rendezvous store: a key/value table of small byte blobs shared by the ranks of a job (rank
// addresses, the NCCL unique id). It moves bytes and nothing else (gloo's rendezvous::Store).
//
// Implementations differ in one way callers must respect: over PMIx and MPI, wait() and get() are
// collective (every rank calls them, in the same order, like a fence), because those transports
// publish data at a fence; the TCP and in-memory stores answer each call on its own. Code inside
// libdtrain only ever uses a store collectively, so it runs unchanged on all of them.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::runtime {

class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  virtual ~Store() = default;

  virtual void set(const std::string& key, const std::string& value) = 0;
  // Blocks until every key exists. Throws Error (kTimeout) naming the store method and the keys
  // still missing after `timeout`.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  // wait({key}) and then the value.
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  // wait(keys) and then every value, in the order of `keys`: one request where the store can
  // (the TCP store), so that gathering N ranks' values costs one round trip, not N.
  virtual std::vector<std::string> get_many(const std::vector<std::string>& keys,
                                            std::chrono::milliseconds timeout);
  // Collective, for stores that publish at a fence (PMIx): `keys[r]` was set by rank r (every
  // rank set its own before calling); returns every rank's value, by rank, after one fence, each
  // read from the rank that set it. nullopt on the other stores (TCP, memory), whose callers
  // gather through one rank instead: a fence-less store answers each rank on its own, so a table
  // one rank publishes is the cheaper round trip there.
  virtual std::optional<std::vector<std::string>> gather_at_fence(
      const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
    (void)keys;
    (void)timeout;
    return std::nullopt;
  }
  // "pmix", "mpi", "tcp", "memory": for messages.
  virtual std::string_view method() const = 0;
};

// Every key prefixed with `prefix` + "/": one namespace per user of a shared store (init() gives
// "tcp" to the TCP communicator, "nccl" to the NCCL one, "user" to Context::store_*). A timeout
// names the keys as the caller wrote them, without the prefix.
class PrefixStore final : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix) + "/") {}
  void set(const std::string& key, const std::string& value) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::vector<std::string> get_many(const std::vector<std::string>& keys,
                                    std::chrono::milliseconds timeout) override;
  std::optional<std::vector<std::string>> gather_at_fence(
      const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::string_view method() const override { return inner_->method(); }

 private:
  std::shared_ptr<Store> inner_;
  std::string prefix_;
};

// In one process (a single-rank job; threads in unit tests).
std::shared_ptr<Store> make_memory_store();

// torchrun's rendezvous: rank 0 serves the table on host:port, every rank (0 included) is a
// client. Throws Error (kTimeout) when the server cannot be reached within `timeout`, (kSystem)
// when rank 0 cannot listen on the port or may not open a file per rank of the `size`.
std::shared_ptr<Store> make_tcp_store(const std::string& host, int port, int rank, int size,
                                      std::chrono::milliseconds timeout);

// Gathers `bytes` from every rank into `out` (rank r's at r * bytes), under the collective
// deadline.
using AllgatherBytes = std::function<void(const void* in, void* out, std::size_t bytes)>;
// Collective, over a communicator of the job's `size` ranks (the MPI store): set() buffers
// locally and wait() exchanges every rank's buffered keys with an allgather.
std::shared_ptr<Store> make_comm_store(AllgatherBytes allgather, int size, std::string method);

}  // namespace dtrain::runtime
