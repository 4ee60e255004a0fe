#include "affinity/process_binding.hpp"

#include <dirent.h>
#include <sched.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// sched_setaffinity(tid, cpus); errno on failure, 0 on success.
int set_affinity(pid_t tid, const CpuSet& cpus) {
  const int n = std::max(cpus.last() + 1, 1);
  std::unique_ptr<cpu_set_t, CpuSetDeleter> set(CPU_ALLOC(n));
  const std::size_t size = CPU_ALLOC_SIZE(n);
  CPU_ZERO_S(size, set.get());
  for (int c : cpus.to_vector()) CPU_SET_S(static_cast<std::size_t>(c), size, set.get());
  return sched_setaffinity(tid, size, set.get()) == 0 ? 0 : errno;
}

}  // namespace

void bind_this_process(const CpuSet& cpus) {
  if (const int err = set_affinity(0, cpus); err != 0) {
    throw std::runtime_error("dtrain: bind: sched_setaffinity(" + cpus.to_list() +
                             "): " + std::strerror(err));
  }
}

void bind_all_threads(const CpuSet& cpus) {
  bind_this_process(cpus);
  const pid_t self = static_cast<pid_t>(::gettid());
  std::unique_ptr<DIR, DirCloser> dir(::opendir("/proc/self/task"));
  if (!dir) {
    throw std::runtime_error(
        std::string("dtrain: bind: /proc/self/task: cannot list the threads: ") +
        std::strerror(errno));
  }
  while (const dirent* e = ::readdir(dir.get())) {
    char* end = nullptr;
    const long tid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || tid == self) continue;  // ".", "..", the caller
    const int err = set_affinity(static_cast<pid_t>(tid), cpus);
    if (err != 0 && err != ESRCH) {
      throw std::runtime_error("dtrain: bind: sched_setaffinity(thread " + std::to_string(tid) +
                               ", " + cpus.to_list() + "): " + std::strerror(err));
    }
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
