// init() and the Context that owns what it acquired.
#include <cstdlib>

#include "bootstrap/bootstrap.hpp"
#include "comm/communicator.hpp"
#include "context_state.hpp"

namespace dtrain {

Error::Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
Error::~Error() = default;

Context::Context(std::unique_ptr<runtime::ContextState> state) : state_(std::move(state)) {}
Context::Context(Context&& other) noexcept = default;
Context& Context::operator=(Context&& other) noexcept = default;
Context::~Context() = default;  // ContextState's member order does the teardown order

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

Context init() {
  auto state = std::make_unique<runtime::ContextState>();
  runtime::Bootstrapped found;
  try {
    found = runtime::bootstrap_select(std::getenv("DTRAIN_BOOTSTRAP"));
  } catch (const Error& e) {
    // After an earlier multi-rank Context, PMIx answers a second init() with NOT-FOUND: say why.
    if (runtime::mpi_finalized()) runtime::throw_finalized(e.what());
    throw;
  }
  state->session = std::move(found.session);
  state->world = std::move(found.world);
  // Several ranks need a transport; MPI is the one every launcher we support can start.
  state->communicator = state->world.size > 1 ? runtime::make_mpi_communicator(state->world)
                                              : runtime::make_single_communicator();
  state->comm.emplace(*state->communicator, state->world.size);
  return Context(std::move(state));
}

}  // namespace dtrain
