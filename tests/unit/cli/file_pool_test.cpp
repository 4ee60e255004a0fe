// The rank logs `dtrain logs` merges through a bounded number of descriptors: the same merged
// bytes with 1, 3 or every file open, never more descriptors than allowed, a replaced file named,
// a process that runs out of descriptors goes on with fewer.
#include "file_pool.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/input_file.hpp"
#include "report/log_merge.hpp"

namespace dtrain::cli {
namespace {
namespace fs = std::filesystem;

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

class FilePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtrain-file-pool-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // 40 logs whose lines interleave, with ties across files and a line without a timestamp.
    for (int r = 0; r < kFiles; ++r) {
      std::ofstream out(path(r));
      for (int i = 0; i < 200; ++i) {
        char ts[64];
        std::snprintf(ts, sizeof ts, "2026-11-22T10:00:%02d.%06dZ", (i / 10) % 60,
                      (i % 10) * 1000 + (r % 7) * 100);
        out << ts << " rank " << r << " line " << i << " " << std::string(r % 13, 'x') << "\n";
        if (i % 50 == 7) out << "a continuation without a timestamp of rank " << r << "\n";
      }
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(int r) const { return (dir_ / ("rank-" + std::to_string(r) + ".log")).string(); }

  // The merge of every file as `dtrain logs` does it, with buffers small enough that each file
  // is read (and re-opened) many times.
  std::string merge(std::size_t max_open, std::size_t* most_open = nullptr) {
    FilePool pool(max_open);
    std::vector<report::MergeInput> inputs;
    for (int r = 0; r < kFiles; ++r) inputs.push_back({r, "h", pool.source(path(r))});
    report::LogMerger merger(std::move(inputs), {}, 256);
    std::string out;
    std::size_t most = 0;
    merger.merge_available(true, [&](std::size_t input, std::string_view line) {
      out += std::to_string(input) + " ";
      out += line;
      out += '\n';
      most = std::max(most, pool.open_now());
    });
    if (most_open != nullptr) *most_open = most;
    return out;
  }

  static constexpr int kFiles = 40;
  fs::path dir_;
};

TEST_F(FilePoolTest, TheSameBytesWithOneFewOrEveryFileOpen) {
  std::size_t most = 0;
  const std::string all = merge(kFiles, &most);
  EXPECT_EQ(static_cast<std::size_t>(kFiles), most);
  EXPECT_EQ(kFiles * (200 + 4), std::count(all.begin(), all.end(), '\n'));
  EXPECT_EQ(all, merge(3, &most));
  EXPECT_LE(most, 3u);
  EXPECT_EQ(all, merge(1, &most));
  EXPECT_EQ(1u, most);
}

TEST_F(FilePoolTest, HoldsNoMoreDescriptorsThanAllowed) {
  const std::size_t before = open_descriptors();
  FilePool pool(5);
  std::vector<std::unique_ptr<report::ByteSource>> sources;
  for (int r = 0; r < kFiles; ++r) sources.push_back(pool.source(path(r)));
  EXPECT_EQ(before + 5, open_descriptors());
  char buf[100];
  for (int round = 0; round < 3; ++round) {
    for (auto& s : sources) EXPECT_EQ(sizeof buf, s->read(buf, sizeof buf));
  }
  EXPECT_EQ(before + 5, open_descriptors());
}

TEST_F(FilePoolTest, ARereadGoesOnWhereItStoppedAndSeesWhatWasAppended) {
  fs::path p = dir_ / "grow.log";
  std::ofstream(p) << "abc";
  FilePool pool(1);
  auto a = pool.source(p.string());
  auto b = pool.source(path(0));  // takes the one descriptor from a
  char buf[16];
  EXPECT_EQ(2u, a->read(buf, 2));
  EXPECT_EQ("ab", std::string(buf, 2));
  b->read(buf, 4);
  std::ofstream(p, std::ios::app) << "def";
  EXPECT_EQ(4u, a->read(buf, sizeof buf));
  EXPECT_EQ("cdef", std::string(buf, 4));
  EXPECT_EQ(0u, a->read(buf, sizeof buf));
}

TEST_F(FilePoolTest, AFileReplacedWhileClosedIsNamed) {
  FilePool pool(1);
  auto a = pool.source(path(0));
  auto b = pool.source(path(1));  // a gives its descriptor up
  // Replaced as log rotation does, by a rename over it: removing it first would free its inode,
  // which the new file may then get again (the same device and inode: the same file to fstat).
  std::ofstream(path(0) + ".new") << "another file\n";
  fs::rename(path(0) + ".new", path(0));
  char buf[16];
  try {
    a->read(buf, sizeof buf);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string::npos,
              std::string(e.what()).find(path(0) + " was replaced by another file"))
        << e.what();
  }
}

TEST_F(FilePoolTest, AMissingFileIsNamed) {
  FilePool pool(4);
  try {
    pool.source((dir_ / "nosuch.log").string());
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(
        "dtrain: cannot read " + (dir_ / "nosuch.log").string() + ": No such file or directory",
        e.what());
  }
  EXPECT_EQ(0u, pool.open_now());
}

// A log listed as a regular file and replaced by a FIFO before it is opened: the open would wait
// for a writer forever.
TEST_F(FilePoolTest, AFifoIsRefusedWithoutWaiting) {
  const std::string fifo = (dir_ / "rank-00009.log").string();
  ASSERT_EQ(0, ::mkfifo(fifo.c_str(), 0600));
  FilePool pool(4);
  try {
    pool.source(fifo);
    FAIL() << "expected an error";
  } catch (const dtrain::InputFileError& e) {
    EXPECT_EQ("dtrain: " + fifo + ": expected a regular file, got a FIFO (named pipe)", e.what());
  }
  EXPECT_EQ(0u, pool.open_now());
}

TEST_F(FilePoolTest, RunningOutOfDescriptorsShrinksThePool) {
  rlimit saved{};
  ASSERT_EQ(0, ::getrlimit(RLIMIT_NOFILE, &saved));
  // Room for 6 more descriptors than are open now, while the pool thinks it may hold 100.
  rlimit low = saved;
  low.rlim_cur = open_descriptors() + 6;
  ASSERT_EQ(0, ::setrlimit(RLIMIT_NOFILE, &low));
  std::string merged;
  std::size_t capacity = 0;
  {
    FilePool pool(100);
    std::vector<report::MergeInput> inputs;
    for (int r = 0; r < kFiles; ++r) inputs.push_back({r, "h", pool.source(path(r))});
    capacity = pool.max_open();
    report::LogMerger merger(std::move(inputs), {}, 256);
    merger.merge_available(true, [&](std::size_t input, std::string_view line) {
      merged += std::to_string(input) + " ";
      merged += line;
      merged += '\n';
    });
  }
  ASSERT_EQ(0, ::setrlimit(RLIMIT_NOFILE, &saved));
  // Shrunk from 100 to about the room left: 6 beyond what the test counted, which may miss a
  // few descriptors of its own (the count's directory, the test framework's).
  EXPECT_LE(capacity, 10u);
  EXPECT_EQ(merge(kFiles), merged);
}

TEST_F(FilePoolTest, TheBudgetLeavesRoomBesideWhatIsOpen) {
  rlimit saved{};
  ASSERT_EQ(0, ::getrlimit(RLIMIT_NOFILE, &saved));
  rlimit low = saved;
  low.rlim_cur = 64;
  low.rlim_max = std::max<rlim_t>(saved.rlim_max, 64);
  ASSERT_EQ(0, ::setrlimit(RLIMIT_NOFILE, &low));
  const std::size_t budget = open_files_budget(4096);
  rlimit now{};
  ::getrlimit(RLIMIT_NOFILE, &now);
  ::setrlimit(RLIMIT_NOFILE, &saved);
  // The soft limit was raised toward what 4,096 logs need, as far as the hard limit allows.
  EXPECT_EQ(std::min<rlim_t>(saved.rlim_max, 4096 + open_descriptors() + 16), now.rlim_cur);
  EXPECT_GE(budget, 1u);
  EXPECT_LE(budget + open_descriptors(), now.rlim_cur);
}

}  // namespace
}  // namespace dtrain::cli
