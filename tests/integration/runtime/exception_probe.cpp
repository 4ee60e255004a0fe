// A rank whose C++ code throws with the Context in scope, as the examples' main() does: every rank
// runs allreduces in a loop, rank 1 throws at step 20, and main's handler prints the exception on
// each rank. The Context is destroyed while the exception propagates, before the handler runs: it
// must leave the job (Context::abort) instead of waiting in MPI's collective teardown, so that
// rank 1's handler prints its message and rank 0's allreduce fails naming rank 1, both within
// seconds (failing_rank_test.sh).
#include <cstdio>
#include <exception>
#include <span>
#include <stdexcept>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace {

int rank_for_messages = -1;

}  // namespace

int main() try {
  dtrain::Context ctx = dtrain::init();
  rank_for_messages = ctx.world().rank;
  std::vector<float> x(1024, 1.0f);
  for (int step = 0; step < 1000000; ++step) {
    if (step == 20 && rank_for_messages == 1) {
      throw std::runtime_error("injected failure at step 20");
    }
    ctx.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kAvg);
  }
  std::fprintf(stderr, "exception_probe: rank %d: expected a failure\n", rank_for_messages);
  return 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "exception_probe: rank %d: error: %s\n", rank_for_messages, e.what());
  return 1;
}
