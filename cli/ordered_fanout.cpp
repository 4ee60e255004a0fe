#include "ordered_fanout.hpp"

#include <sched.h>

namespace dtrain::cli {

std::size_t reader_threads() {
  constexpr std::size_t kMost = 4;
  cpu_set_t set;
  CPU_ZERO(&set);
  std::size_t cpus = 1;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    cpus = static_cast<std::size_t>(CPU_COUNT(&set));
  } else {
    cpus = std::thread::hardware_concurrency();
  }
  return std::clamp<std::size_t>(cpus, 1, kMost);
}

}  // namespace dtrain::cli
