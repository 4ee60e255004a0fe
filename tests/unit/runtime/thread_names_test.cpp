// libdtrain's threads carry names (common/thread_name.hpp), so that `top -H`, gdb, py-spy and perf
// tell a rank's progress thread and messages' thread from its own: read here as those tools read
// them, from /proc/self/task/*/comm.
#include "common/thread_name.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store.hpp"
#include "comm/engine.hpp"
#include "tcp_test_ranks.hpp"
#include "threads_as_ranks.hpp"

namespace {

// Every thread's name in this process, as `ps -L` shows them.
std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(ThreadNames, ANamedThreadRunsItsBodyUnderItsNameCutToLinuxsFifteenCharacters) {
  std::vector<std::string> seen;
  dtrain::named_thread("dtrain-a-name-longer-than-fifteen", [&] { seen = thread_names(); }).join();
  EXPECT_TRUE(has(seen, "dtrain-a-name-l")) << ::testing::PrintToString(seen);
}

// The progress thread starts with the first collective queued (engine.hpp), so a communicator
// that only sent messages (or a group never used) has none yet.
TEST(ThreadNames, AnEnginesProgressThreadAndTheMessagesThreadAreNamed) {
  auto store = dtrain::runtime::make_memory_store();
  std::vector<std::string> before;
  std::vector<std::string> seen;
  dtrain::test::threads_as_ranks(2, [&](int rank) {
    dtrain::runtime::PrefixStore tcp(store, "tcp");
    auto engine = std::make_unique<dtrain::runtime::Engine>(
        dtrain::runtime::make_tcp_communicator(tcp, rank, 2, dtrain::test::settings(false)), rank,
        2, dtrain::test::settings(false));
    dtrain::Comm c(*engine);
    std::int32_t v = rank;
    if (rank == 0) {
      c.send(&v, 1, dtrain::DType::kInt32, 1, 0);
      c.recv(&v, 1, dtrain::DType::kInt32, 1, 1);
    } else {
      c.recv(&v, 1, dtrain::DType::kInt32, 0, 0);
      before = thread_names();
      c.send(&v, 1, dtrain::DType::kInt32, 0, 1);
    }
    c.allreduce_async(&v, &v, 1, dtrain::DType::kInt32, dtrain::ReduceOp::kSum).wait();
    if (rank == 1) seen = thread_names();
    c.barrier();
  });
  EXPECT_FALSE(has(before, "dtrain-engine")) << ::testing::PrintToString(before);
  EXPECT_TRUE(has(before, "dtrain-messages")) << ::testing::PrintToString(before);
  EXPECT_TRUE(has(seen, "dtrain-engine")) << ::testing::PrintToString(seen);
}

}  // namespace
