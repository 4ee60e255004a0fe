// One rank of the init() affinity tests (init_affinity_test.sh). Starts a thread of its own first,
// as an application's thread pool would, then calls dtrain::init() and prints one tab-separated
// line:
//   affinity_probe rank=R local_rank=L local_size=LS affinity=A CUDA_VISIBLE_DEVICES=...
//   DTRAIN_GPUS=... DTRAIN_CPUSET=... NCCL_SOCKET_IFNAME=... GLOO_SOCKET_IFNAME=... host=H
//   before=CPUS threads=CPUS[;CPUS...]
// `before` is the process's CPU list before init(), `threads` the distinct CPU lists of all its
// threads after it (from /proc/self/task/*/status); an unset variable prints as <unset>.
// A failed init() (or barrier) prints "affinity_probe: failed: MESSAGE" on stderr and exits 3.
#include <dirent.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <dtrain/dtrain.hpp>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace {

std::string cpus_allowed(const std::string& status_file) {
  std::ifstream in(status_file);
  const std::string key = "Cpus_allowed_list:";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0) {
      const auto start = line.find_first_not_of(" \t", key.size());
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "?";
}

std::string thread_cpus() {
  std::set<std::string> lists;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      lists.insert(cpus_allowed(std::string("/proc/self/task/") + e->d_name + "/status"));
    }
    ::closedir(dir);
  }
  std::string out;
  for (const auto& l : lists) out += (out.empty() ? "" : ";") + l;
  return out;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "<unset>";
}

}  // namespace

int main() {
  const std::string before = cpus_allowed("/proc/self/status");
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread worker([&] {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return done; });
  });
  auto stop_worker = [&] {
    {
      std::lock_guard<std::mutex> lock(m);
      done = true;
    }
    cv.notify_all();
    worker.join();
  };
  try {
    dtrain::Context ctx = dtrain::init();
    const dtrain::WorldInfo& w = ctx.world();
    const std::string line =
        "affinity_probe\trank=" + std::to_string(w.rank) +
        "\tlocal_rank=" + std::to_string(w.local_rank) +
        "\tlocal_size=" + std::to_string(w.local_size) + "\taffinity=" + w.affinity +
        "\tCUDA_VISIBLE_DEVICES=" + env("CUDA_VISIBLE_DEVICES") +
        "\tDTRAIN_GPUS=" + env("DTRAIN_GPUS") + "\tDTRAIN_CPUSET=" + env("DTRAIN_CPUSET") +
        "\tNCCL_SOCKET_IFNAME=" + env("NCCL_SOCKET_IFNAME") +
        "\tGLOO_SOCKET_IFNAME=" + env("GLOO_SOCKET_IFNAME") + "\thost=" + w.hostname +
        "\tbefore=" + before + "\tthreads=" + thread_cpus() + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);  // one write: ranks do not interleave
    std::fflush(stdout);
    ctx.comm().barrier();
  } catch (const dtrain::Error& e) {
    std::fprintf(stderr, "affinity_probe: failed: %s\n", e.what());
    stop_worker();
    return 3;
  }
  stop_worker();
  return 0;
}
