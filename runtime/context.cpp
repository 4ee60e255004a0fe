#include <cstdlib>

#include "bootstrap/bootstrap.hpp"
#include "comm/backends.hpp"
#include "context_state.hpp"

namespace dtrain {

Context::Context(std::unique_ptr<detail::ContextState> state) : state_(std::move(state)) {}
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

Context::~Context() {
  if (!state_) return;
  state_->comm.reset();  // MPI_Finalize before PMIx_Finalize
  state_->session.reset();
}

const WorldInfo& Context::world() const { return state_->world; }
Communicator& Context::comm() { return *state_->comm; }
const std::string& Context::run_dir() const { return state_->run_dir; }

Context init() {
  auto state = std::make_unique<detail::ContextState>();
  detail::Bootstrapped b = detail::bootstrap_select(std::getenv("DTRAIN_BOOTSTRAP"));
  state->session = std::move(b.session);
  state->world = b.world;
  if (const char* dir = std::getenv("DTRAIN_RUN_DIR")) state->run_dir = dir;
  state->comm = state->world.size > 1 ? detail::make_mpi_communicator(state->world)
                                      : detail::make_single_communicator();
  return Context(std::move(state));
}

}  // namespace dtrain
