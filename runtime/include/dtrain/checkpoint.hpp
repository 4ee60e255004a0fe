// dtrain::Checkpointer: saves the training state once, from rank 0, without ever leaving a torn
// checkpoint behind, and loads the newest complete one on every rank. Both calls are collective:
// every rank calls them, in the same order as its other collectives, and every rank returns the
// same result or throws the same Error, so a failed save on rank 0 cannot leave the others
// waiting in a collective that rank 0 never enters.
//
//   dtrain::Checkpointer ckpt(ctx, "ckpt", {.keep = 3});
//   if (auto c = ckpt.load_latest()) { restore(c->data); start = c->step + 1; }
//   ...
//   ckpt.save(step, std::as_bytes(std::span(model)));      // every rank; rank 0's bytes are kept
//
// On disk (rank 0 only): DIR/ckpt-<step> (step zero-padded to 12 digits, up to 19), written as
// DIR/ckpt-<step>.tmp, fsynced, renamed, the directory fsynced; then DIR/latest (the file name of
// the newest checkpoint, one line, for people and tools: load_latest() lists the directory) is
// replaced the same way; then checkpoints beyond `keep` are removed. The file format (header with
// magic, version, step, sizes, CRC-32) is in docs/runtime-api.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain {

// The points of a save on rank 0, in order; CheckpointOptions::on_stage sees each.
enum class SaveStage {
  kBeforeWrite,     // nothing on disk yet for this step
  kWriting,         // ckpt-<step>.tmp partly written (`bytes` of payload so far)
  kWritten,         // .tmp complete and fsynced, not yet renamed
  kRenamed,         // renamed to ckpt-<step>, directory not yet fsynced
  kDirSynced,       // the rename is durable; `latest` not yet updated
  kPointerWritten,  // latest.tmp written and fsynced, not yet renamed over `latest`
  kPointerUpdated,  // `latest` names the new checkpoint; old ones not yet removed
  kPruned,          // old checkpoints beyond `keep` removed: the save is complete
};

struct CheckpointOptions {
  // How many checkpoints to keep (the newest by step); 0 keeps all. Old ones are removed only
  // after the new one and the `latest` pointer are durable.
  int keep = 3;
  // Called on rank 0 at each stage of a save, on the calling thread. For tests (kill the process
  // at a chosen point) and progress reports; it must not call libdtrain.
  std::function<void(SaveStage stage, std::uint64_t bytes)> on_stage;
  // A save refuses (Error kInvalid, naming the newer file) when the directory holds a checkpoint
  // with a higher step, so that a run restarted from scratch in an old directory cannot wipe the
  // old run's newer checkpoints. True removes them instead (a deliberate restart from an older
  // step). Newer ones that this Checkpointer's load_latest() skipped as corrupt (listed in
  // Checkpoint::skipped) are removed either way.
  bool discard_newer = false;
};

// Streams a checkpoint's shared data to the file (save with a writer callback).
class DTRAIN_API CheckpointWriter {
 public:
  virtual ~CheckpointWriter();
  // Appends bytes; throws Error (kSystem) naming the file when the write fails.
  virtual void write(std::span<const std::byte> bytes) = 0;
  // Bytes written so far.
  virtual std::uint64_t bytes() const = 0;
};

struct Checkpoint {
  std::int64_t step = 0;
  std::vector<std::byte> data;       // the shared data (rank 0's at save time)
  std::vector<std::byte> rank_data;  // this rank's own blob (empty if none or rank >= saved_world)
  int saved_world = 0;               // how many ranks saved a blob (the world size at save time)
  std::string path;                  // the file it came from
  // Newer checkpoints that were skipped because they are torn, fail their checksum or are not
  // regular files, one message each ("DIR/ckpt-000000000300: payload checksum mismatch; ...",
  // "DIR/ckpt-000000000400: not a regular file (a directory)"); empty normally.
  std::vector<std::string> skipped;
};

class DTRAIN_API Checkpointer {
 public:
  // Touches nothing on disk: the directory is created by the first save. Throws Error (kInvalid)
  // for an empty dir or keep < 0.
  Checkpointer(Context& ctx, std::string dir, CheckpointOptions options = {});

  // Collective. Rank 0 writes `data`; other ranks' `data` is ignored (pass what you have, or
  // nothing). `rank_data` is each rank's own small blob (RNG state, data position), gathered to
  // rank 0 into the same file; keep it small (it goes through an allgather padded to the largest
  // blob). Every rank must pass the same step (0 to INT64_MAX); throws Error (kInvalid) on every
  // rank otherwise. Throws Error (kInvalid) on every rank, before writing anything, when the
  // directory holds a newer valid checkpoint (see CheckpointOptions::discard_newer). A failure on
  // rank 0 (disk full, a permission) throws the same Error (kSystem) on every rank, and leaves the
  // previous checkpoints as they were.
  void save(std::int64_t step, std::span<const std::byte> data,
            std::span<const std::byte> rank_data = {});
  // The same, with rank 0's data streamed by `write` (called on rank 0 only). An exception from
  // `write` fails the save on every rank with its message.
  void save(std::int64_t step, const std::function<void(CheckpointWriter&)>& write,
            std::span<const std::byte> rank_data = {});

  // Collective. Rank 0 reads the newest checkpoint (by step), verifies it and, if it is torn,
  // fails its checksum or is not a regular file, falls back to the next older one, saying so in
  // Checkpoint::skipped; then every rank receives the step, the shared data and its own blob.
  // Returns nothing when the directory holds no checkpoint (or does not exist). Throws Error
  // (kSystem) on every rank when checkpoint files exist but none is valid, naming each and what
  // is wrong with it, and when a file cannot be read (EIO, a stale NFS handle): a failed read is
  // not a reason to fall back, the file may be intact. Paths are any bytes (not only UTF-8).
  std::optional<Checkpoint> load_latest();

  const std::string& dir() const { return dir_; }

 private:
  void save_impl(std::int64_t step, const std::function<void(CheckpointWriter&)>& write,
                 std::span<const std::byte> rank_data);

  Context* ctx_;
  std::string dir_;
  CheckpointOptions options_;
  // Rank 0: the newer steps the last load_latest() skipped as corrupt, which a save may remove.
  std::vector<std::int64_t> discardable_;
};

}  // namespace dtrain
