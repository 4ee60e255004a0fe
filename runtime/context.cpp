// init() and the Context that owns what it acquired.
#include <exception>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "comm/single_communicator.hpp"
#include "comm/transport/mpi/mpi_communicator.hpp"
#include "comm/transport/nccl/nccl_communicator.hpp"
#include "comm/transport/tcp/tcp_communicator.hpp"
#include "context_state.hpp"
#include "init_affinity.hpp"
#include "mpi/mpi.hpp"
#include "records/live_status.hpp"
#include "records/rank_lines.hpp"
#include "settings.hpp"

namespace dtrain {

Error::Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
Error::~Error() = default;

Context::Context(std::unique_ptr<runtime::ContextState> state) : state_(std::move(state)) {}
Context::Context(Context&& other) noexcept = default;
Context& Context::operator=(Context&& other) noexcept = default;
Context::~Context() {
  // Unwinding: the other ranks are not finalizing with this one but waiting in the training loop,
  // so a collective teardown would hold the whole job until DTRAIN_TIMEOUT (5 min by default).
  // The exception's text is not reachable here: the handler that catches it prints it, after
  // the Context is gone. So the others are told when the process exits: told now, they would end
  // the job, and the launcher kill this rank, before the handler could print anything.
  if (state_ && state_->world.size > 1 && std::uncaught_exceptions() > state_->uncaught_at_init) {
    leave(std::string(records::kExceptionPropagatesWords) +
              " (the program's handler, or std::terminate, prints it)",
          true);
  }
  // Then ContextState's member order does the teardown order.
}

void Context::abort(const std::string& reason) noexcept { leave(reason, false); }

void Context::leave(const std::string& reason, bool at_exit) noexcept {
  if (!state_) return;
  runtime::ContextState& s = *state_;
  std::string report;
  try {
    const WorldInfo& w = s.world;
    report = "dtrain: rank " + std::to_string(w.rank) + " of " + std::to_string(w.size) + " (on " +
             (w.hostname.empty() ? std::string("this host") : w.hostname) +
             "): leaving the job: " + reason +
             (w.size == 1 ? ""
              : at_exit   ? "; the other ranks are told as this process exits, and the teardown "
                            "waits for none of them"
                          : "; the other ranks are told, and the teardown waits for none of them");
  } catch (...) {
    // Out of memory: leave without the line.
  }
  if (s.device_engine) s.device_engine->abort("");
  if (s.engine) s.engine->abort(report, at_exit);
}

namespace {

[[noreturn]] void throw_moved_from() {
  throw Error(Error::Code::kInvalid,
              "dtrain: context: used after it was moved from; expected the Context init() "
              "returned, or the one it was moved to");
}

}  // namespace

const WorldInfo& Context::world() const {
  if (!state_) throw_moved_from();
  return state_->world;
}

Comm& Context::comm() {
  if (!state_) throw_moved_from();
  return *state_->comm;
}

Comm& Context::device_comm() {
  if (!state_) throw_moved_from();
  runtime::ContextState& s = *state_;
  if (!s.device_comm) {
    runtime::PrefixStore store(s.store, "nccl");
    s.device_engine = std::make_unique<runtime::Engine>(
        runtime::make_nccl_communicator(store, s.world, s.settings.deadline()), s.world.rank,
        s.world.size, s.settings);
    s.device_comm.emplace(*s.device_engine);
  }
  return *s.device_comm;
}

void Context::store_set(const std::string& key, const std::string& value) {
  if (!state_) throw_moved_from();
  state_->user_store->set(key, value);
}

std::string Context::store_get(const std::string& key) {
  if (!state_) throw_moved_from();
  return state_->user_store->get(key, state_->settings.timeout);
}

namespace {

// What both init()s share once the bootstrap found this process's place: the communicator over
// the bootstrap's store, the engine, the user's store.
Context start(std::unique_ptr<runtime::ContextState> state, runtime::Bootstrapped found) {
  const runtime::Settings& settings = state->settings;
  state->session = std::move(found.session);
  const WorldInfo& w = state->world;
  // Several ranks need a transport (runtime::host_transport): our own TCP sockets, or MPI.
  std::unique_ptr<runtime::Communicator> backend;
  if (w.size == 1) {
    backend = runtime::make_single_communicator(settings.timeout);
  } else if (runtime::host_transport(settings.transport, w.bootstrap, runtime::mpi_initialized()) ==
             runtime::HostTransport::kTcp) {
    runtime::PrefixStore store(found.store, "tcp");
    backend = runtime::make_tcp_communicator(store, w.rank, w.size, settings);
  } else {
    backend = runtime::make_mpi_communicator(w, found.owns_mpi, settings);
  }
  state->engine = std::make_unique<runtime::Engine>(std::move(backend), w.rank, w.size, settings);
  // Its logger's watch follows the world's collectives (the ones every rank joins) through it.
  if (auto live = records::LivePage::from_environment(settings.live_fd))
    state->engine->set_live_page(std::move(live));
  state->comm.emplace(*state->engine);
  state->store = found.store;
  if (!state->store) {
    // The MPI bootstrap's store runs over the communicator itself, under the same deadline.
    Comm* comm = &*state->comm;
    state->store = runtime::make_comm_store(
        [comm](const void* in, void* out, std::size_t bytes) {
          comm->allgather(in, out, bytes, DType::kUInt8);
        },
        w.size, "mpi");
  }
  state->user_store = std::make_unique<runtime::PrefixStore>(state->store, "user");
  return Context(std::move(state));
}

}  // namespace

Context init() {
  auto state = std::make_unique<runtime::ContextState>();
  state->uncaught_at_init = std::uncaught_exceptions();
  state->settings = runtime::settings_from_environment();
  const runtime::Settings& settings = state->settings;
  runtime::Bootstrapped found;
  try {
    found = runtime::bootstrap_select(settings);
  } catch (const Error& e) {
    // After an earlier multi-rank Context, PMIx answers a second init() with NOT-FOUND: say why.
    if (runtime::mpi_finalized()) runtime::throw_finalized(e.what());
    throw;
  }
  state->world = std::move(found.world);
  state->world.attempt = settings.attempt;
  // Now that the local rank is known, and before the communicator starts MPI's threads and
  // before anything could initialise CUDA.
  state->world.affinity = runtime::apply_init_affinity(state->world, settings);
  return start(std::move(state), std::move(found));
}

Context init(const ExternalBootstrap& bootstrap) {
  auto state = std::make_unique<runtime::ContextState>();
  state->uncaught_at_init = std::uncaught_exceptions();
  state->settings = runtime::settings_from_environment();
  if (bootstrap.timeout) {
    if (bootstrap.timeout->count() <= 0) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: bootstrap: external: timeout; expected a positive duration, got " +
                      std::to_string(bootstrap.timeout->count()) + " ms");
    }
    state->settings.timeout = *bootstrap.timeout;
    state->settings.timeout_source = runtime::TimeoutSource::kCaller;
  }
  runtime::Bootstrapped found = runtime::bootstrap_external(bootstrap);
  state->world = std::move(found.world);
  state->world.attempt = state->settings.attempt;
  // The caller's threads run already and it knows no local rank (ExternalBootstrap): binding them
  // here would move a running program's threads behind its back. A launcher binds (dtrain bind,
  // the SPANK plugin), as for any torchrun program.
  state->world.affinity = "off: bootstrapped by the caller (init(ExternalBootstrap))";
  return start(std::move(state), std::move(found));
}

}  // namespace dtrain
