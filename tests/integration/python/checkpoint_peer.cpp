// One rank of a mixed C++/Python job (mixed_checkpoint_test.sh): saves a checkpoint whose shared
// data and per-rank blob name the language and the rank, loads the newest one back and prints what
// it got. checkpoint_peer.py does exactly the same collectives from Python.
//   checkpoint_peer DIR STEP
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dtrain/dtrain.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: checkpoint_peer DIR STEP\n");
    return 2;
  }
  dtrain::Context ctx = dtrain::init();
  const int rank = ctx.world().rank;
  dtrain::Checkpointer ckpt(ctx, argv[1]);
  const std::string data = "shared from C++ rank " + std::to_string(rank);
  const std::string mine = "blob of C++ rank " + std::to_string(rank);
  ckpt.save(std::atoll(argv[2]), std::as_bytes(std::span(data)), std::as_bytes(std::span(mine)));
  const auto c = ckpt.load_latest();
  if (!c) return 1;
  const auto text = [](const std::vector<std::byte>& b) {
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  std::printf("C++ rank %d: step %lld, data \"%s\", rank_data \"%s\", saved_world %d\n", rank,
              static_cast<long long>(c->step), text(c->data).c_str(), text(c->rank_data).c_str(),
              c->saved_world);
  return 0;
}
