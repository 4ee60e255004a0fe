// The external bootstrap: the caller says where this process sits and hands over a store it
// already shares with the other ranks (torch.distributed's, through dtrain.torch), so libdtrain
// opens no rendezvous of its own.
#include <algorithm>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/store_errors.hpp"
#include "net/socket.hpp"

namespace dtrain {

BootstrapStore::~BootstrapStore() = default;

namespace runtime {
namespace {

constexpr std::string_view kMethod = "external";

// runtime::Store over the caller's BootstrapStore. The caller's get() blocks until the key is set,
// which is all wait() needs; its exceptions (torch's c10::Error for a lost TCPStore server) become
// a StoreTimeout when the deadline passed, else an Error (kComm) that keeps their text.
class ExternalStore final : public Store {
 public:
  explicit ExternalStore(std::shared_ptr<BootstrapStore> inner) : inner_(std::move(inner)) {}

  void set(const std::string& key, const std::string& value) override {
    try {
      inner_->set(key, value);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(Error::Code::kComm, "dtrain: store: external: set \"" + key + "\": " + e.what());
    }
  }

  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (std::size_t i = 0; i < keys.size(); ++i) fetch(keys, i, deadline, timeout);
  }

  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    return fetch({key}, 0, std::chrono::steady_clock::now() + timeout, timeout);
  }

  std::string_view method() const override { return kMethod; }

 private:
  std::string fetch(const std::vector<std::string>& keys, std::size_t i,
                    std::chrono::steady_clock::time_point deadline,
                    std::chrono::milliseconds timeout) {
    // Rounded up: a store that gives up after `left` then does so at the deadline, not a fraction
    // of a millisecond before it, and its failure is the deadline's (kTimeout) below.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    try {
      return inner_->get(keys[i], std::max(left, std::chrono::milliseconds(1)));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      if (std::chrono::steady_clock::now() >= deadline) {
        throw_store_timeout(kMethod, {keys.begin() + static_cast<std::ptrdiff_t>(i), keys.end()},
                            timeout);
      }
      throw Error(Error::Code::kComm,
                  "dtrain: store: external: get \"" + keys[i] + "\": " + e.what());
    }
  }

  std::shared_ptr<BootstrapStore> inner_;
};

}  // namespace

Bootstrapped bootstrap_external(const ExternalBootstrap& given) {
  if (given.size < 1) {
    throw Error(Error::Code::kInvalid,
                "dtrain: bootstrap: external: size; expected at least 1, got " +
                    std::to_string(given.size));
  }
  if (given.rank < 0 || given.rank >= given.size) {
    throw Error(Error::Code::kInvalid, "dtrain: bootstrap: external: rank; expected 0 to " +
                                           std::to_string(given.size - 1) + ", got " +
                                           std::to_string(given.rank));
  }
  if (given.size > 1 && !given.store) {
    throw Error(Error::Code::kInvalid,
                "dtrain: bootstrap: external: store; expected the store the " +
                    std::to_string(given.size) + " ranks share, got none");
  }
  Bootstrapped out;
  WorldInfo& w = out.world;
  w.bootstrap = std::string(kMethod);
  w.rank = given.rank;
  w.size = given.size;
  // The local rank and size stay unknown (0 of 1): the caller's store says nothing about nodes.
  // The TCP communicator finds which ranks share a node from their host names itself.
  w.node_id = -1;
  w.hostname = net::local_host_name();
  out.store = given.store ? std::make_shared<ExternalStore>(given.store) : make_memory_store();
  return out;
}

}  // namespace runtime
}  // namespace dtrain
