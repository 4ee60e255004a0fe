// Files a user names as inputs (input_file.cpp): only a regular file is read, never more than the
// cap, and a FIFO is refused at once instead of waiting for a writer.
#include "common/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

#include "../support/scratch_dir.hpp"

namespace dtrain {
namespace {

class InputFile : public test_support::ScratchDirTest {
 protected:
  InputFile() : ScratchDirTest("dtrain-input-file-test-") {}
  std::string in_dir(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(in_dir(name)) << text;
    return in_dir(name);
  }
};

std::string read_error(const std::string& path, std::size_t max_bytes) {
  try {
    read_input_file(path, "a job spec (YAML)", max_bytes);
  } catch (const InputFileError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string check_error(const std::string& path, const std::string& component = "") {
  try {
    check_input_file(path, "a readable hwloc XML file", component);
  } catch (const InputFileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(InputFile, ReadsARegularFileWhole) {
  const std::string path = write("spec.yaml", "name: x\nnodes: 2\n");
  EXPECT_EQ(read_input_file(path, "a job spec (YAML)", 1024), "name: x\nnodes: 2\n");
  EXPECT_EQ(read_input_file(path, "a job spec (YAML)", 17), "name: x\nnodes: 2\n");  // at the cap
  EXPECT_EQ(read_input_file(write("empty", ""), "a job spec (YAML)", 0), "");
  EXPECT_EQ(check_error(path), "(no error)");
}

TEST_F(InputFile, RefusesAFileOverTheCap) {
  const std::string path = write("spec.yaml", "name: x\nnodes: 2\n");
  EXPECT_EQ(read_error(path, 16),
            "dtrain: " + path + ": expected a job spec (YAML) of at most 16 bytes, got 17 bytes");
}

TEST_F(InputFile, RefusesAMissingFile) {
  const std::string path = in_dir("nothing.yaml");
  EXPECT_EQ(read_error(path, 1024), "dtrain: " + path +
                                        ": cannot open it: No such file or directory; expected a "
                                        "job spec (YAML)");
  EXPECT_EQ(check_error(path, "topology"),
            "dtrain: topology: " + path +
                ": cannot open it: No such file or directory; expected a readable hwloc XML file");
}

TEST_F(InputFile, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string fifo = in_dir("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_error(fifo, 1024),
            "dtrain: " + fifo + ": expected a job spec (YAML), got a FIFO (named pipe)");
  EXPECT_EQ(check_error(fifo),
            "dtrain: " + fifo + ": expected a readable hwloc XML file, got a FIFO (named pipe)");
}

TEST_F(InputFile, RefusesDirectoriesAndDevicesBehindSymlinks) {
  const std::string sub = in_dir("sub");
  ASSERT_EQ(::mkdir(sub.c_str(), 0700), 0);
  EXPECT_EQ(read_error(sub, 1024),
            "dtrain: " + sub + ": expected a job spec (YAML), got a directory");
  const std::string zero = in_dir("zero");
  ASSERT_EQ(::symlink("/dev/zero", zero.c_str()), 0);
  EXPECT_EQ(read_error(zero, 1024),
            "dtrain: " + zero + ": expected a job spec (YAML), got a character device");
  EXPECT_EQ(
      check_error(zero, "topology"),
      "dtrain: topology: " + zero + ": expected a readable hwloc XML file, got a character device");
}

// A run directory has attempts.jsonl only when a supervisor wrote it: nothing there is no error,
// anything else is refused as read_input_file refuses it.
TEST_F(InputFile, AnOptionalFileMayBeAbsentButNotSpecial) {
  EXPECT_EQ(read_input_file_if_present(in_dir("none"), "attempt records", 1024), std::nullopt);
  ASSERT_EQ(::symlink("none", in_dir("dangling").c_str()), 0);
  EXPECT_EQ(read_input_file_if_present(in_dir("dangling"), "attempt records", 1024), std::nullopt);
  EXPECT_EQ(read_input_file_if_present(write("a.jsonl", "{}\n"), "attempt records", 1024), "{}\n");
  const std::string fifo = in_dir("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string loop = in_dir("loop");
  ASSERT_EQ(::symlink("loop", loop.c_str()), 0);
  for (const auto& [path, problem] :
       {std::pair{fifo, std::string(": expected attempt records, got a FIFO (named pipe)")},
        std::pair{loop, std::string(": cannot open it: Too many levels of symbolic links; "
                                    "expected attempt records")}}) {
    try {
      read_input_file_if_present(path, "attempt records", 1024);
      ADD_FAILURE() << path << " was read";
    } catch (const InputFileError& e) {
      EXPECT_EQ(e.what(), "dtrain: " + path + problem);
    }
  }
}

TEST_F(InputFile, OpenInputSaysWhatItFound) {
  const OpenedInput file = open_input(write("f", "abc"));
  ASSERT_GE(file.fd, 0);
  EXPECT_EQ(file.size, 3u);
  ::close(file.fd);
  const OpenedInput missing = open_input(in_dir("none"));
  EXPECT_EQ(missing.fd, -1);
  EXPECT_EQ(missing.error, ENOENT);
  const OpenedInput device = open_input("/dev/zero");
  EXPECT_EQ(device.fd, -1);
  EXPECT_EQ(device.error, 0);
  EXPECT_EQ(device.kind, "a character device");
}

}  // namespace
}  // namespace dtrain
