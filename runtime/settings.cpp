#include "settings.hpp"

#include <signal.h>

#include <cstdlib>
#include <limits>

#include "affinity/errors.hpp"
#include "common/number_text.hpp"
#include "common/on_off.hpp"
#include "dtrain/dtrain.hpp"
#include "preemption/signals.hpp"
#include "records/attempt_record.hpp"

namespace dtrain::runtime {
namespace {

// Unset and empty are the same: "use the default".
std::optional<std::string> non_empty(const EnvLookup& env, const char* name) {
  std::optional<std::string> v = env(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

std::string parse_bootstrap(const std::optional<std::string>& v) {
  if (!v) return "";
  for (const char* known : {"pmix", "mpi", "tcp", "env", "single"}) {
    if (*v == known) return *v;
  }
  throw Error(Error::Code::kInvalid,
              "dtrain: bootstrap: DTRAIN_BOOTSTRAP: unknown method; expected pmix, mpi, tcp, env "
              "or single, got \"" +
                  *v + "\"");
}

std::chrono::milliseconds parse_timeout(const std::optional<std::string>& v) {
  if (!v) return std::chrono::seconds(300);
  // Under 1 ms the deadline would round to 0, and every collective would time out at once.
  const std::optional<double> s = dtrain::parse_decimal_number(*v, 0.001, 1e7);
  if (!s) {
    throw Error(Error::Code::kInvalid,
                "dtrain: DTRAIN_TIMEOUT: expected a positive number of seconds (at least 0.001, "
                "at most 1e7), got \"" +
                    *v + "\"");
  }
  return std::chrono::milliseconds(static_cast<long long>(*s * 1000.0 + 0.5));
}

// A count from 0 of decimal digits only, as `dtrain supervise` writes it.
int parse_attempt(const std::optional<std::string>& v) {
  if (!v) return 0;
  const std::optional<long long> attempt = dtrain::parse_whole_number(*v, 0, records::kMaxAttempt);
  if (!attempt) {
    throw Error(Error::Code::kInvalid,
                "dtrain: DTRAIN_ATTEMPT: expected the attempt number, 0 to " +
                    std::to_string(records::kMaxAttempt) + ", got \"" + *v + "\"");
  }
  return static_cast<int>(*attempt);
}

// 0 (off), or seconds from kMinResourceInterval: a sample every millisecond would be a thread
// busy reading /proc beside the training.
double parse_resource_interval(const std::optional<std::string>& v) {
  if (!v) return kDefaultResourceInterval;
  const std::optional<double> s = dtrain::parse_decimal_number(*v, 0, kMaxResourceInterval);
  if (!s || (*s > 0 && *s < kMinResourceInterval)) {
    throw Error(Error::Code::kInvalid,
                "dtrain: DTRAIN_RESOURCE_INTERVAL: expected seconds between resource samples, "
                "0.01 to 86400, or 0 for none, got \"" +
                    *v + "\"");
  }
  return *s;
}

// A whole number of bytes of at least `minimum`: decimal digits only (" -1" is not 2^64-1).
std::size_t parse_bytes(const char* name, const std::optional<std::string>& v, std::size_t fallback,
                        std::size_t minimum) {
  if (!v) return fallback;
  const std::optional<long long> n = dtrain::parse_whole_number(
      *v, static_cast<long long>(minimum), std::numeric_limits<long long>::max());
  if (!n) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: ") + name +
                                           ": expected a byte count of at least " +
                                           std::to_string(minimum) + ", got \"" + *v + "\"");
  }
  return static_cast<std::size_t>(*n);
}

// The switch words every dtrain setting takes (common/on_off.hpp), so DTRAIN_SHM=off works as
// DTRAIN_VERBOSE=off and plugstack's verbose=off do.
bool parse_shm(const std::optional<std::string>& v) {
  if (!v) return true;
  if (const auto on = dtrain::parse_switch(*v)) return *on;
  throw Error(Error::Code::kInvalid,
              "dtrain: DTRAIN_SHM: expected 0 or off (allreduce through MPI or TCP messages) or 1 "
              "or on (through shared memory when every rank is on one node), got \"" +
                  *v + "\"");
}

AllreduceAlgo parse_algo(const std::optional<std::string>& v) {
  if (!v || *v == "auto") return AllreduceAlgo::kAuto;
  if (*v == "flat") return AllreduceAlgo::kFlat;
  if (*v == "hierarchical") return AllreduceAlgo::kHierarchical;
  throw Error(Error::Code::kInvalid,
              "dtrain: DTRAIN_ALGO: expected auto, flat (every rank alike) or hierarchical "
              "(inside each node, then across nodes), got \"" +
                  *v + "\"");
}

HostTransport parse_transport(const std::optional<std::string>& v) {
  if (!v || *v == "auto") return HostTransport::kAuto;
  if (*v == "tcp") return HostTransport::kTcp;
  if (*v == "mpi") return HostTransport::kMpi;
  throw Error(Error::Code::kInvalid,
              "dtrain: DTRAIN_TRANSPORT: expected auto, tcp (libdtrain's sockets) or mpi, got \"" +
                  *v + "\"");
}

affinity::SelfApplyMode parse_affinity(const std::optional<std::string>& v) {
  try {
    return affinity::parse_self_apply_mode(v ? std::optional<std::string_view>(*v) : std::nullopt);
  } catch (const affinity::PolicyError& e) {
    throw Error(Error::Code::kInvalid, e.what());
  }
}

}  // namespace

HostTransport host_transport(HostTransport wanted, const std::string& bootstrap,
                             bool mpi_initialized) {
  const bool torchrun_style = bootstrap == "tcp";
  if (wanted == HostTransport::kMpi && torchrun_style) {
    throw Error(Error::Code::kInvalid,
                "dtrain: DTRAIN_TRANSPORT=mpi: expected an MPI launch (mpirun, mpiexec, srun "
                "--mpi=pmix), got a torchrun-style one (MASTER_ADDR, RANK, WORLD_SIZE); unset "
                "DTRAIN_TRANSPORT or launch with MPI");
  }
  // A store given by the caller (torch.distributed's) carries the sockets' addresses; MPI's
  // world need not even be the caller's group (a torch subgroup), so the sockets are the only
  // transport, whatever MPI runs in the process.
  if (bootstrap == "external") {
    if (wanted == HostTransport::kMpi) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: DTRAIN_TRANSPORT=mpi: expected an MPI launch, got a store given by "
                  "the caller (init(ExternalBootstrap): a torch.distributed process group), "
                  "whose ranks talk over libdtrain's sockets; unset DTRAIN_TRANSPORT");
    }
    return HostTransport::kTcp;
  }
  if (wanted == HostTransport::kTcp && bootstrap == "mpi") {
    throw Error(Error::Code::kInvalid,
                "dtrain: DTRAIN_TRANSPORT=tcp: expected a PMIx or torchrun-style launch, got the "
                "MPI bootstrap, which has no store for the sockets' addresses but MPI itself; "
                "unset DTRAIN_TRANSPORT or launch with PMIx (srun --mpi=pmix, Open MPI's mpirun)");
  }
  if (wanted != HostTransport::kAuto) return wanted;
  if (torchrun_style) return HostTransport::kTcp;
  return mpi_initialized || bootstrap == "mpi" ? HostTransport::kMpi : HostTransport::kTcp;
}

Settings parse_settings(const EnvLookup& env) {
  Settings s;
  s.bootstrap = parse_bootstrap(non_empty(env, "DTRAIN_BOOTSTRAP"));
  s.timeout = parse_timeout(non_empty(env, "DTRAIN_TIMEOUT"));
  s.affinity = parse_affinity(non_empty(env, "DTRAIN_AFFINITY"));
  s.launcher_applied = non_empty(env, "DTRAIN_CPUSET").has_value();
  s.topology = non_empty(env, "DTRAIN_TOPOLOGY").value_or("");
  s.piece_bytes = parse_bytes("DTRAIN_PIECE_BYTES", non_empty(env, "DTRAIN_PIECE_BYTES"), 0, 4096);
  s.shm = parse_shm(non_empty(env, "DTRAIN_SHM"));
  if (const auto v = non_empty(env, "DTRAIN_SHM_MESSAGES")) {
    const auto on = dtrain::parse_switch(*v);
    if (!on) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: DTRAIN_SHM_MESSAGES: expected 0 or off (messages within a node "
                  "through the sockets) or 1 or on (through shared-memory rings), got \"" +
                      *v + "\"");
    }
    s.shm_messages = *on;
  }
  s.algo = parse_algo(non_empty(env, "DTRAIN_ALGO"));
  s.transport = parse_transport(non_empty(env, "DTRAIN_TRANSPORT"));
  s.fusion_bytes = parse_bytes("DTRAIN_FUSION_BYTES", non_empty(env, "DTRAIN_FUSION_BYTES"),
                               s.fusion_bytes, 1024);
  // Set but empty is an empty list, which names no signal: refused, unlike the others.
  const std::optional<std::string> signals = env("DTRAIN_PREEMPT_SIGNALS");
  s.preempt_signals = signals ? parse_signal_list(*signals) : std::vector<int>{SIGUSR1, SIGTERM};
  s.run_dir = non_empty(env, "DTRAIN_RUN_DIR").value_or("");
  s.attempt = parse_attempt(non_empty(env, "DTRAIN_ATTEMPT"));
  s.resource_interval = parse_resource_interval(non_empty(env, "DTRAIN_RESOURCE_INTERVAL"));
  if (const auto v = non_empty(env, "DTRAIN_RECORDS")) {
    const auto detail = records::parse_record_detail(*v);
    if (!detail) {
      throw Error(Error::Code::kInvalid, "dtrain: DTRAIN_RECORDS: expected " +
                                             std::string(records::kRecordDetailExpected) +
                                             ", got \"" + *v + "\"");
    }
    s.record_detail = *detail;
  }
  s.alarm_fd = non_empty(env, "DTRAIN_ALARM_FD");
  s.live_fd = non_empty(env, "DTRAIN_LIVE_FD");
  return s;
}

Settings settings_from_environment() {
  return parse_settings([](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  });
}

}  // namespace dtrain::runtime
