// dtrain::Checkpointer in one process (the single communicator): the bytes on disk, the order of
// a save's stages, pruning, and the fallback from torn or corrupt checkpoints. Kills in the middle
// of a save are in tests/integration/checkpoint.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}
std::string text_of(const std::vector<std::byte>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}
std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_file(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << s;
}
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// ctest removes the launcher variables before init() runs in ctx_'s initializer (CMakeLists.txt:
// bare_env).
class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dtrain-ckpt-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ / "ckpt";
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
  fs::path dir_;
  dtrain::Context ctx_ = dtrain::init();
};

std::int64_t ckpt_step(dtrain::Checkpointer& ckpt) {
  auto c = ckpt.load_latest();
  return c ? c->step : -1;
}

template <typename F>
dtrain::Error error_of(F&& f) {
  try {
    f();
  } catch (const dtrain::Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a dtrain::Error";
  return dtrain::Error(dtrain::Error::Code::kInternal, "none");
}

TEST_F(CheckpointTest, NothingToLoadFromAMissingOrEmptyDirectory) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  EXPECT_FALSE(ckpt.load_latest().has_value());
  EXPECT_FALSE(fs::exists(dir_)) << "load_latest must not create the directory";
  fs::create_directories(dir_);
  write_file(dir_ / "notes.txt", "not a checkpoint");
  EXPECT_FALSE(ckpt.load_latest().has_value());
}

TEST_F(CheckpointTest, SaveWritesHeaderPointerAndLoadsBack) {
  dtrain::Checkpointer ckpt(ctx_, (dir_ / "a" / "b").string());  // parents are created
  const auto data = bytes_of("model state");
  const auto mine = bytes_of("rng=17");
  ckpt.save(5, data, mine);

  const fs::path file = dir_ / "a" / "b" / "ckpt-000000000005";
  EXPECT_EQ(names_in(dir_ / "a" / "b"), (std::vector<std::string>{"ckpt-000000000005", "latest"}));
  EXPECT_EQ(read_file(dir_ / "a" / "b" / "latest"), "ckpt-000000000005\n");
  const std::string raw = read_file(file);
  // 64-byte header + data + one rank entry (8-byte size + blob).
  ASSERT_EQ(raw.size(), 64u + 11u + 8u + 6u);
  EXPECT_EQ(raw.substr(0, 8), "DTRAINCK");
  EXPECT_EQ(raw[8], 1) << "format version";
  EXPECT_EQ(raw[16], 5) << "step, little-endian";
  EXPECT_EQ(raw.substr(64, 11), "model state");
  EXPECT_EQ(raw.substr(64 + 11 + 8), "rng=17");

  auto loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->step, 5);
  EXPECT_EQ(text_of(loaded->data), "model state");
  EXPECT_EQ(text_of(loaded->rank_data), "rng=17");
  EXPECT_EQ(loaded->saved_world, 1);
  EXPECT_EQ(loaded->path, file.string());
  EXPECT_TRUE(loaded->skipped.empty());
}

// In a dtrain run, rank 0 records each save in RUN_DIR/checkpoints.jsonl (docs/fault-tolerance.md)
// with how long it took and the file's size, which `dtrain report` shows.
TEST_F(CheckpointTest, ASaveInARunIsRecordedWithItsDurationAndSize) {
  const fs::path run = root_ / "run";
  fs::create_directories(run);
  setenv("DTRAIN_RUN_DIR", run.c_str(), 1);
  dtrain::Context ctx = dtrain::init();
  unsetenv("DTRAIN_RUN_DIR");
  dtrain::Checkpointer ckpt(ctx, dir_.string());
  ckpt.save(5, bytes_of("model state"), bytes_of("rng=17"));
  const std::string line = read_file(run / "checkpoints.jsonl");
  const std::string file = (dir_ / "ckpt-000000000005").string();
  const std::regex want(R"(\{"v":1,"time":"[-0-9T:.]+Z","step":5,"path":")" + file +
                        R"(","world":1,"seconds":([-0-9.e]+),"bytes":89\}\n)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(line, m, want)) << line;
  EXPECT_EQ(fs::file_size(file), 89u) << "64-byte header + data + one rank entry";
  const double seconds = std::stod(m[1].str());
  EXPECT_GE(seconds, 0.0);
}

TEST_F(CheckpointTest, WriterCallbackStreamsPieces) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  ckpt.save(3, [](dtrain::CheckpointWriter& w) {
    for (const char* piece : {"one ", "two ", "three"}) {
      w.write(std::as_bytes(std::span(piece, std::strlen(piece))));
    }
    EXPECT_EQ(w.bytes(), 13u);
  });
  auto loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(text_of(loaded->data), "one two three");
  EXPECT_TRUE(loaded->rank_data.empty());
}

TEST_F(CheckpointTest, StagesRunInOrderAndOldCheckpointsGoOnlyAtTheEnd) {
  std::vector<dtrain::SaveStage> stages;
  std::vector<std::string> at_pointer_update;
  dtrain::CheckpointOptions opts;
  opts.keep = 2;
  opts.on_stage = [&](dtrain::SaveStage s, std::uint64_t) {
    // kWriting comes once per piece written (the data, then the per-rank table): count it once.
    if (stages.empty() || stages.back() != s) stages.push_back(s);
    if (s == dtrain::SaveStage::kPointerUpdated) at_pointer_update = names_in(dir_);
  };
  dtrain::Checkpointer ckpt(ctx_, dir_.string(), opts);
  for (int step = 1; step <= 3; ++step) ckpt.save(step * 10, bytes_of("s" + std::to_string(step)));
  using S = dtrain::SaveStage;
  const std::vector<S> one = {S::kBeforeWrite, S::kWriting,        S::kWritten,        S::kRenamed,
                              S::kDirSynced,   S::kPointerWritten, S::kPointerUpdated, S::kPruned};
  ASSERT_EQ(stages.size(), 3 * one.size());
  EXPECT_TRUE(std::equal(one.begin(), one.end(), stages.end() - static_cast<long>(one.size())));
  EXPECT_EQ(at_pointer_update, (std::vector<std::string>{"ckpt-000000000010", "ckpt-000000000020",
                                                         "ckpt-000000000030", "latest"}));
  EXPECT_EQ(names_in(dir_),
            (std::vector<std::string>{"ckpt-000000000020", "ckpt-000000000030", "latest"}));
}

TEST_F(CheckpointTest, KeepZeroKeepsAll) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string(), {.keep = 0, .on_stage = {}});
  for (int step = 0; step < 5; ++step) ckpt.save(step, bytes_of("x"));
  EXPECT_EQ(names_in(dir_).size(), 6u);
}

TEST_F(CheckpointTest, FallsBackFromACorruptNewestAndSaysWhy) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  ckpt.save(1, bytes_of("first"));
  ckpt.save(2, bytes_of("second"));
  const fs::path newest = dir_ / "ckpt-000000000002";
  std::string raw = read_file(newest);
  raw[64] ^= 0x01;  // one bit of the payload
  write_file(newest, raw);
  auto loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 1);
  EXPECT_EQ(text_of(loaded->data), "first");
  ASSERT_EQ(loaded->skipped.size(), 1u);
  EXPECT_EQ(loaded->skipped[0].rfind(
                newest.string() + ": payload checksum mismatch; expected CRC-32 ", 0),
            0u)
      << loaded->skipped[0];
}

TEST_F(CheckpointTest, EveryTruncationAndEveryByteFlipOfTheNewestIsDetected) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string(), {.keep = 0, .on_stage = {}});
  ckpt.save(1, bytes_of("old state"), bytes_of("r0"));
  ckpt.save(2, bytes_of("new state!"), bytes_of("r0b"));
  const fs::path newest = dir_ / "ckpt-000000000002";
  const std::string good = read_file(newest);
  for (std::size_t len = 0; len < good.size(); ++len) {
    write_file(newest, good.substr(0, len));
    auto loaded = ckpt.load_latest();
    ASSERT_TRUE(loaded) << "truncated to " << len;
    ASSERT_EQ(loaded->step, 1) << "a file truncated to " << len << " bytes was accepted";
    EXPECT_EQ(text_of(loaded->data), "old state");
  }
  for (std::size_t at = 0; at < good.size(); ++at) {
    if (at >= 48 && at < 60) continue;  // reserved header bytes (covered by the header CRC below)
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x40);
    write_file(newest, bad);
    auto loaded = ckpt.load_latest();
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->step, 1) << "a flip at byte " << at << " was accepted";
  }
}

TEST_F(CheckpointTest, NoValidCheckpointIsAnErrorNamingEachFile) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  ckpt.save(7, bytes_of("state"));
  write_file(dir_ / "ckpt-000000000007", "garbage that is long enough to hold a header? no: 40");
  const auto e = error_of([&] { ckpt.load_latest(); });
  EXPECT_EQ(e.code(), dtrain::Error::Code::kSystem);
  EXPECT_EQ(std::string(e.what()),
            "dtrain: checkpoint: no valid checkpoint in " + dir_.string() +
                "; 1 found, none verifies:\n  " + (dir_ / "ckpt-000000000007").string() +
                ": file too short for a header; expected at least 64 bytes, got 52");
}

TEST_F(CheckpointTest, TempFilesAreNeverLoadedAndStaleOnesArePruned) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  ckpt.save(1, bytes_of("one"));
  // What a save killed mid-write leaves: a .tmp with a higher step.
  write_file(dir_ / "ckpt-000000000002.tmp", std::string(100, '\0'));
  auto loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 1);
  EXPECT_TRUE(loaded->skipped.empty());
  ckpt.save(2, bytes_of("two"));
  EXPECT_EQ(names_in(dir_),
            (std::vector<std::string>{"ckpt-000000000001", "ckpt-000000000002", "latest"}));
}

TEST_F(CheckpointTest, AFailingWriterFailsTheSaveAndLeavesThePreviousIntact) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  ckpt.save(1, bytes_of("one"));
  const auto e = error_of([&] {
    ckpt.save(2, [](dtrain::CheckpointWriter& w) {
      w.write(bytes_of("partial"));
      throw std::runtime_error("serializer ran out of tensors");
    });
  });
  EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
  EXPECT_EQ(std::string(e.what()),
            "dtrain: checkpoint: save of step 2: the writer callback failed: serializer ran out "
            "of tensors");
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"ckpt-000000000001", "latest"}));
  EXPECT_EQ(ckpt.load_latest()->step, 1);
}

TEST_F(CheckpointTest, BadArgumentsAndUnwritableDirectoriesAreNamed) {
  EXPECT_EQ(std::string(error_of([&] { dtrain::Checkpointer(ctx_, ""); }).what()),
            "dtrain: checkpoint: directory; expected a path, got an empty string");
  EXPECT_EQ(std::string(error_of([&] {
                          dtrain::Checkpointer(ctx_, "d", {.keep = -1, .on_stage = {}});
                        }).what()),
            "dtrain: checkpoint: keep; expected 0 (keep all) or more, got -1");
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  EXPECT_EQ(std::string(error_of([&] { ckpt.save(-1, bytes_of("x")); }).what()),
            "dtrain: checkpoint: save: step; expected 0 or more, got -1");
  // A directory under a regular file cannot be created, even by root.
  write_file(root_ / "file", "x");
  dtrain::Checkpointer blocked(ctx_, (root_ / "file" / "ckpt").string());
  const auto e = error_of([&] { blocked.save(1, bytes_of("x")); });
  EXPECT_EQ(e.code(), dtrain::Error::Code::kSystem);
  EXPECT_EQ(std::string(e.what()), "dtrain: checkpoint: " + (root_ / "file" / "ckpt").string() +
                                       ": mkdir failed: Not a directory");
}

TEST_F(CheckpointTest, ADirectoryNameThatIsNotUtf8RoundTrips) {
  const fs::path dir = root_ / "caf\xe9";  // Latin-1, not UTF-8
  dtrain::Checkpointer ckpt(ctx_, dir.string());
  ckpt.save(5, bytes_of("state"));
  auto loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 5);
  EXPECT_EQ(loaded->path, (dir / "ckpt-000000000005").string());
  EXPECT_EQ(text_of(loaded->data), "state");
  // The error that names the path carries its bytes too.
  write_file(dir / "ckpt-000000000005", "short");
  const auto e = error_of([&] { ckpt.load_latest(); });
  EXPECT_EQ(std::string(e.what()), "dtrain: checkpoint: no valid checkpoint in " + dir.string() +
                                       "; 1 found, none verifies:\n  " +
                                       (dir / "ckpt-000000000005").string() +
                                       ": file too short for a header; expected at least 64 "
                                       "bytes, got 5");
}

TEST_F(CheckpointTest, StepsUpToInt64MaxRoundTripAndOldNamesStayReadable) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string(), {.keep = 2, .on_stage = {}});
  ckpt.save(5, bytes_of("five"));
  ckpt.save(1000000000000000000, bytes_of("big"));
  EXPECT_EQ(read_file(dir_ / "latest"), "ckpt-1000000000000000000\n");
  auto loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 1000000000000000000);
  EXPECT_EQ(text_of(loaded->data), "big");
  ckpt.save(INT64_MAX, bytes_of("max"));
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"ckpt-1000000000000000000",
                                                      "ckpt-9223372036854775807", "latest"}))
      << "keep = 2 prunes step 5";
  EXPECT_EQ(ckpt.load_latest()->step, INT64_MAX);

  // Any digit count is a step when its value fits (names of other versions); beyond, not a step.
  fs::remove_all(dir_);
  ckpt.save(7, bytes_of("seven"));
  fs::rename(dir_ / "ckpt-000000000007", dir_ / "ckpt-0000000000000000000000007");
  write_file(dir_ / "ckpt-99999999999999999999", "not a step: above INT64_MAX");
  loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 7);
  EXPECT_EQ(loaded->path, (dir_ / "ckpt-0000000000000000000000007").string());
  EXPECT_TRUE(loaded->skipped.empty());
}

TEST_F(CheckpointTest, EntriesThatAreNotRegularFilesAreSkippedNamedAndLeftAlone) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  ckpt.save(1, bytes_of("one"));
  fs::create_directory(dir_ / "ckpt-000000000002");
  ASSERT_EQ(mkfifo((dir_ / "ckpt-000000000003").c_str(), 0600), 0);  // opening it must not block
  fs::create_symlink(dir_ / "nowhere", dir_ / "ckpt-000000000004");
  auto loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 1);
  EXPECT_EQ(
      loaded->skipped,
      (std::vector<std::string>{
          (dir_ / "ckpt-000000000004").string() + ": not a regular file (a dangling symbolic link)",
          (dir_ / "ckpt-000000000003").string() + ": not a regular file (a FIFO)",
          (dir_ / "ckpt-000000000002").string() + ": not a regular file (a directory)"}));
  ckpt.save(5, bytes_of("five"));
  EXPECT_EQ(names_in(dir_),
            (std::vector<std::string>{"ckpt-000000000001", "ckpt-000000000002", "ckpt-000000000003",
                                      "ckpt-000000000004", "ckpt-000000000005", "latest"}));
}

TEST_F(CheckpointTest, ASaveRefusesToRemoveANewerCheckpointUnlessAsked) {
  {
    dtrain::Checkpointer old_run(ctx_, dir_.string());
    old_run.save(10, bytes_of("ten"));
    old_run.save(20, bytes_of("twenty"));
  }
  // A run started from scratch in the same directory, without load_latest().
  dtrain::Checkpointer fresh(ctx_, dir_.string());
  const auto e = error_of([&] { fresh.save(1, bytes_of("one")); });
  EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
  EXPECT_EQ(std::string(e.what()),
            "dtrain: checkpoint: save of step 1: " + dir_.string() + " holds a newer checkpoint, " +
                (dir_ / "ckpt-000000000020").string() +
                " (step 20); expected a step above 20 (resume from it with load_latest() first), "
                "or set CheckpointOptions::discard_newer to remove it, or save to another "
                "directory");
  EXPECT_EQ(names_in(dir_),
            (std::vector<std::string>{"ckpt-000000000010", "ckpt-000000000020", "latest"}));
  EXPECT_EQ(read_file(dir_ / "latest"), "ckpt-000000000020\n");

  dtrain::Checkpointer restart(ctx_, dir_.string(),
                               {.keep = 3, .on_stage = {}, .discard_newer = true});
  restart.save(1, bytes_of("one"));
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"ckpt-000000000001", "latest"}));
  EXPECT_EQ(ckpt_step(restart), 1);
}

TEST_F(CheckpointTest, ANewerCheckpointReportedCorruptByTheLoadGoesAtTheNextSave) {
  dtrain::Checkpointer ckpt(ctx_, dir_.string());
  ckpt.save(10, bytes_of("ten"));
  ckpt.save(20, bytes_of("twenty"));
  std::string raw = read_file(dir_ / "ckpt-000000000020");
  raw[64] ^= 0x01;
  write_file(dir_ / "ckpt-000000000020", raw);
  auto loaded = ckpt.load_latest();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 10);
  ASSERT_EQ(loaded->skipped.size(), 1u);
  ckpt.save(15, bytes_of("fifteen"));  // the resumed run moves on from step 10
  EXPECT_EQ(names_in(dir_),
            (std::vector<std::string>{"ckpt-000000000010", "ckpt-000000000015", "latest"}));
}

}  // namespace
