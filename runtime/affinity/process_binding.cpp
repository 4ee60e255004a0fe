#include "affinity/process_binding.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace dtrain::affinity {
namespace {

struct CpuSetDeleter {
  void operator()(cpu_set_t* s) const { CPU_FREE(s); }
};

// Large enough for any machine dtrain targets; CPU_ALLOC sizes are dynamic so >1024 CPUs work.
constexpr int kMaxCpus = 8192;

}  // namespace

void bind_this_process(const CpuSet& cpus) {
  const int n = std::max(cpus.last() + 1, 1);
  std::unique_ptr<cpu_set_t, CpuSetDeleter> set(CPU_ALLOC(n));
  const std::size_t size = CPU_ALLOC_SIZE(n);
  CPU_ZERO_S(size, set.get());
  for (int c : cpus.to_vector()) CPU_SET_S(static_cast<std::size_t>(c), size, set.get());
  if (sched_setaffinity(0, size, set.get()) != 0) {
    throw std::runtime_error("dtrain: bind: sched_setaffinity(" + cpus.to_list() +
                             "): " + std::strerror(errno));
  }
}

CpuSet current_cpu_affinity() {
  std::unique_ptr<cpu_set_t, CpuSetDeleter> set(CPU_ALLOC(kMaxCpus));
  const std::size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, set.get());
  CpuSet out;
  if (sched_getaffinity(0, size, set.get()) != 0) return out;
  for (int c = 0; c < kMaxCpus; ++c) {
    if (CPU_ISSET_S(static_cast<std::size_t>(c), size, set.get())) out.add(c);
  }
  return out;
}

}  // namespace dtrain::affinity
