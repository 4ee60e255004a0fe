// The hang watch's reach records as rank 0's logger reads them from RUN_DIR/live: each node's
// record, and nothing else under a matching name (a FIFO, a directory) can stop or mislead it.
#include "link_watch.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

TEST(LinkWatch, ReadsEachNodesRecordAndLeavesOutWhatIsNoFile) {
  const fs::path dir =
      fs::temp_directory_path() / ("dtrain-link-watch-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "reach-node1.txt");
    out << dtrain::report::format_reach({"node1", {"node3"}, {"node2"}});
  }
  // A FIFO would block an ifstream forever; a directory reads as nothing.
  ASSERT_EQ(::mkfifo((dir / "reach-node2.txt").c_str(), 0644), 0);
  fs::create_directories(dir / "reach-node3.txt");
  {
    std::ofstream out(dir / "reach-node4.txt");
    out << "not a reach line";
  }
  const dtrain::cli::LinkWatch watch(dir.string(), "node1");
  const auto records = watch.read();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].host, "node1");
  EXPECT_EQ(records[0].answered, std::vector<std::string>{"node3"});
  EXPECT_EQ(records[0].silent, std::vector<std::string>{"node2"});
  fs::remove_all(dir);
}

}  // namespace
