// A training code's first lines against an installed libdtrain: init, then one collective.
#include <dtrain/dtrain.hpp>

#include <array>
#include <cstdio>
#include <span>

int main() {
  dtrain::Context ctx = dtrain::init();
  std::array<double, 3> values = {1.0, 2.0, 3.0};
  ctx.comm().allreduce(std::span<double>(values), dtrain::ReduceOp::kSum);
  const double expected = ctx.world().size;
  if (values[0] != expected || values[2] != 3 * expected) {
    std::fprintf(stderr, "consumer_cxx: wrong allreduce result %g %g\n", values[0], values[2]);
    return 1;
  }
  std::printf("consumer_cxx ok: rank %d of %d (%s)\n", ctx.world().rank, ctx.world().size,
              ctx.world().bootstrap.c_str());
  return 0;
}
