// The reading half of a checkpoint load with a file reader that fails on demand: a failed read
// (EIO, a stale NFS handle) must be told apart from a corrupt file, which no root-run test can
// produce on a real file system.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../../support/scratch_dir.hpp"
#include "checkpoint/files.hpp"

namespace {

namespace fs = std::filesystem;
namespace ck = dtrain::runtime::checkpoint;

class CheckpointFilesTest : public dtrain::test_support::ScratchDirTest {
 protected:
  CheckpointFilesTest() : ScratchDirTest("dtrain-ckpt-files-test-") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    for (std::int64_t step : {1, 2}) {
      const std::string data = "state " + std::to_string(step);
      ck::write_checkpoint(dir_.string(), step,
                           [&](dtrain::CheckpointWriter& w) {
                             w.write(std::as_bytes(std::span(data.data(), data.size())));
                           },
                           {}, 0, 0, false, {}, {});
    }
    newest_ = (dir_ / "ckpt-000000000002").string();
  }
  // Reads like the real reader, except that the newest file fails with `err`.
  ck::FileReader failing_on_newest(int err) const {
    return [this, err](const std::string& path) {
      if (path == newest_) {
        throw dtrain::Error(dtrain::Error::Code::kSystem,
                            "dtrain: checkpoint: " + path + ": read failed: " + std::strerror(err));
      }
      return ck::read_file(path);
    };
  }

  std::string newest_;
};

TEST_F(CheckpointFilesTest, AFailedReadIsAnErrorNotAFallback) {
  try {
    const auto outcome = ck::read_newest_valid(dir_.string(), failing_on_newest(EIO));
    FAIL() << "fell back to step " << (outcome.loaded ? outcome.loaded->step : -1)
           << " past a file it could not read";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kSystem);
    EXPECT_EQ(std::string(e.what()),
              "dtrain: checkpoint: " + newest_ +
                  ": read failed: Input/output error; not falling back to an older checkpoint "
                  "past one that cannot be read: fix the file system (or move the file away) and "
                  "load again");
  }
}

TEST_F(CheckpointFilesTest, ACorruptNewestStillFallsBackAndIsMarkedDiscardable) {
  std::fstream f(newest_, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(64);
  f.put('X');  // the first payload byte
  f.close();
  const auto outcome = ck::read_newest_valid(dir_.string());
  ASSERT_TRUE(outcome.loaded);
  EXPECT_EQ(outcome.loaded->step, 1);
  ASSERT_EQ(outcome.skipped.size(), 1u);
  EXPECT_EQ(outcome.skipped[0].rfind(newest_ + ": payload checksum mismatch", 0), 0u);
  EXPECT_EQ(outcome.skipped_steps, (std::vector<std::int64_t>{2}));
}

TEST_F(CheckpointFilesTest, TheRealReaderNamesTheCallThatFailed) {
  fs::create_directory(dir_ / "sub");
  EXPECT_FALSE(ck::read_file((dir_ / "missing").string()).has_value()) << "a vanished file";
  try {
    ck::read_file((dir_ / "sub").string());
    FAIL() << "read a directory";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: checkpoint: " + (dir_ / "sub").string() + ": a directory since the listing");
  }
}

}  // namespace
