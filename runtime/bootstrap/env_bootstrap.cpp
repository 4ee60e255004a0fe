// The environment/TCP bootstrap: torchrun's variables name the rank and the rendezvous address,
// and rank 0 serves the TCP store there.
#include <optional>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "common/number_text.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {
namespace {

// The variable's value, nullptr when it is unset.
const char* lookup(const launch::Environment& env, const char* name) {
  const auto it = env.find(name);
  return it == env.end() ? nullptr : it->second.c_str();
}

std::string required(const launch::Environment& env, const char* name) {
  const char* v = lookup(env, name);
  if (v == nullptr || *v == '\0') {
    throw Error(Error::Code::kInvalid,
                std::string(name) +
                    " is not set; expected MASTER_ADDR, MASTER_PORT, RANK and "
                    "WORLD_SIZE (as torchrun sets them)");
  }
  return v;
}

// Strict (common/number_text.hpp): the whole value must be decimal digits in [lo, hi] (no "4x",
// no "", no " 0").
long parse_int(const char* name, const std::string& value, long lo, long hi) {
  const std::optional<long long> n = dtrain::parse_whole_number(value, lo, hi);
  if (!n) {
    throw Error(Error::Code::kInvalid, std::string(name) + ": expected an integer from " +
                                           std::to_string(lo) + " to " + std::to_string(hi) +
                                           ", got \"" + value + "\"");
  }
  return static_cast<long>(*n);
}

}  // namespace

Bootstrapped bootstrap_env(const launch::Environment& env, std::chrono::milliseconds timeout) {
  const std::string addr = required(env, "MASTER_ADDR");
  const auto port =
      static_cast<int>(parse_int("MASTER_PORT", required(env, "MASTER_PORT"), 1, 65535));
  const auto size =
      static_cast<int>(parse_int("WORLD_SIZE", required(env, "WORLD_SIZE"), 1, 1 << 24));
  const auto rank = static_cast<int>(parse_int("RANK", required(env, "RANK"), 0, size - 1));
  Bootstrapped out;
  WorldInfo& w = out.world;
  w.bootstrap = "tcp";
  w.rank = rank;
  w.size = size;
  // torchrun sets both; a bare launch without them is one rank per node as far as we know. One
  // without the other gives no place on the node (a local size cannot be guessed from a rank).
  const char* lr = lookup(env, "LOCAL_RANK");
  const char* ls = lookup(env, "LOCAL_WORLD_SIZE");
  if ((lr == nullptr) != (ls == nullptr)) {
    throw Error(Error::Code::kInvalid,
                std::string(lr ? "LOCAL_RANK" : "LOCAL_WORLD_SIZE") + " is set but not " +
                    (lr ? "LOCAL_WORLD_SIZE" : "LOCAL_RANK") +
                    "; expected both (as torchrun sets them) or neither (one rank per node)");
  }
  w.local_size = ls ? static_cast<int>(parse_int("LOCAL_WORLD_SIZE", ls, 1, size)) : 1;
  w.local_rank = lr ? static_cast<int>(parse_int("LOCAL_RANK", lr, 0, w.local_size - 1)) : 0;
  const char* node = lookup(env, "GROUP_RANK");
  w.node_id = node ? static_cast<int>(parse_int("GROUP_RANK", node, 0, size - 1)) : -1;
  w.hostname = net::local_host_name();
  out.store = make_tcp_store(net::connectable(addr), port, rank, size, timeout);
  return out;
}

}  // namespace dtrain::runtime
