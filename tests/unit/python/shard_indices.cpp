// The C++ side of shard_test.py: prints what dtrain::Shard gives for the arguments, one rank's
// indices on one line, so the test can compare them with the Python binding's.
//   shard_indices N RANK WORLD SHUFFLE(0|1) SEED TAIL(pad|drop|exact_once) EPOCH CONSUMED
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dtrain/shard.hpp"

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr, "usage: shard_indices N RANK WORLD SHUFFLE SEED TAIL EPOCH CONSUMED\n");
    return 2;
  }
  const std::string tail = argv[6];
  dtrain::ShardOptions options;
  options.shuffle = std::string(argv[4]) == "1";
  options.seed = std::strtoull(argv[5], nullptr, 10);
  options.tail = tail == "drop"         ? dtrain::ShardTail::kDrop
                 : tail == "exact_once" ? dtrain::ShardTail::kExactOnce
                                        : dtrain::ShardTail::kPad;
  const dtrain::Shard shard(std::strtoull(argv[1], nullptr, 10), std::atoi(argv[2]),
                            std::atoi(argv[3]), options);
  std::string line;
  for (std::uint64_t i :
       shard.indices(std::strtoull(argv[7], nullptr, 10), std::strtoull(argv[8], nullptr, 10))) {
    line += std::to_string(i) + " ";
  }
  std::printf("%s\n", line.c_str());
  return 0;
}
