// Rank 0's side of a checkpoint: the file system steps of an atomic save and the verified read of
// the newest complete checkpoint. No communication here (checkpointer.cpp adds that).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dtrain/checkpoint.hpp"

namespace dtrain::runtime::checkpoint {

// Writes DIR/ckpt-<step> atomically (see checkpoint.hpp for the order of the steps), updates
// DIR/latest and prunes to `keep`. Creates DIR (and its parents) when missing. Before writing
// anything, refuses (Error kInvalid, naming the newest such file) when DIR holds a checkpoint
// newer than `step`, unless `discard_newer` or its step is in `discardable` (newer ones that
// load_latest reported as corrupt); those are removed with the pruning. Throws Error (kSystem)
// naming the path and the failed call; the .tmp of a failed save is removed.
void write_checkpoint(const std::string& dir, std::int64_t step,
                      const std::function<void(CheckpointWriter&)>& write_data,
                      std::span<const std::byte> rank_table, std::uint32_t rank_count, int keep,
                      bool discard_newer, std::span<const std::int64_t> discardable,
                      const std::function<void(SaveStage, std::uint64_t)>& on_stage);

struct LoadedFile {
  std::int64_t step = 0;
  std::string path;
  std::vector<std::byte> data;
  std::vector<std::vector<std::byte>> rank_blobs;
};

struct ReadOutcome {
  std::optional<LoadedFile> loaded;         // the newest valid checkpoint, if any
  std::vector<std::string> skipped;         // newer ones that failed verification, one message each
  std::vector<std::int64_t> skipped_steps;  // those that are regular files (a save may remove)
};

// The whole content of one checkpoint file. Throws Error (kSystem) naming the path and the failed
// call when it cannot be opened or read (EIO, a stale NFS handle): unlike a bad checksum, that
// says nothing about the bytes on disk. Returns nothing when the file vanished (a concurrent
// prune).
using FileReader = std::function<std::optional<std::vector<std::byte>>(const std::string& path)>;
std::optional<std::vector<std::byte>> read_file(const std::string& path);

// Reads the checkpoints in DIR newest first (with `read`; tests inject failures) and returns the
// first that verifies; entries that are not regular files are skipped. A missing DIR or one
// without checkpoints gives an empty outcome; throws Error (kSystem) when DIR cannot be listed,
// when a file cannot be read (no fallback past it: it may be the newest valid checkpoint), or when
// checkpoints exist but none verifies (the message lists each and its fault).
ReadOutcome read_newest_valid(const std::string& dir, const FileReader& read = read_file);

// Verifies one file's bytes (exposed for tests): the LoadedFile, or the reason it is not valid.
std::optional<LoadedFile> verify(const std::string& path, std::int64_t name_step,
                                 std::span<const std::byte> bytes, std::string* error);

}  // namespace dtrain::runtime::checkpoint
