// The collective half of dtrain::Checkpointer. A save is three collectives whatever happens on
// rank 0: an allgather of (step, blob size) that every rank checks the same way, an allgather of
// the per-rank blobs (skipped when all are empty, which every rank knows from the first), and a
// broadcast of rank 0's outcome. So rank 0 never runs a collective the others do not, and a
// failure on rank 0 reaches every rank as the same Error.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "checkpoint/files.hpp"
#include "checkpoint/format.hpp"
#include "comm/engine.hpp"
#include "dtrain/checkpoint.hpp"
#include "records/attempt_record.hpp"
#include "records/log_line.hpp"

namespace dtrain {

namespace {

namespace ck = runtime::checkpoint;

// Backends take element counts that may end up in an MPI int: broadcast big buffers in pieces.
constexpr std::size_t kBroadcastChunk = std::size_t{1} << 30;

void broadcast_bytes(Comm& comm, std::byte* data, std::size_t size) {
  for (std::size_t at = 0; at < size; at += kBroadcastChunk) {
    comm.broadcast(data + at, std::min(kBroadcastChunk, size - at), DType::kUInt8, 0);
  }
}

// Rank 0, after a durable save in a dtrain run: one line in RUN_DIR/checkpoints.jsonl, from which
// `dtrain supervise` tells an attempt that made progress from one that did not
// (docs/fault-tolerance.md). Best effort: a run directory that cannot be written must not fail a
// save that succeeded; the supervisor then sees no progress and does not restart. The record says
// how long the save took since `began` (docs/report.md shows it) and the file's size, when the file
// can be measured (a concurrent prune may already have removed it).
void record_save(const std::string& run_dir, const std::string& dir, std::int64_t step, int world,
                 std::chrono::steady_clock::time_point began) {
  if (run_dir.empty()) return;
  records::CheckpointRecord record{records::format_log_time(std::chrono::system_clock::now()), step,
                                   dir + "/" + runtime::checkpoint::file_name(step), world};
  record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(record.path, ec);
  if (!ec) record.bytes = static_cast<long long>(bytes);
  const std::string line = records::format_checkpoint_record(record) + "\n";
  const std::string path = run_dir + "/" + std::string(records::kCheckpointsFile);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

// Rank 0's outcome, sent to every rank: a code (-1: success) and a message.
void broadcast_outcome(Comm& comm, int code, std::string message) {
  std::int64_t head[2] = {code, static_cast<std::int64_t>(message.size())};
  comm.broadcast(std::span<std::int64_t>(head), 0);
  message.resize(static_cast<std::size_t>(head[1]));
  broadcast_bytes(comm, reinterpret_cast<std::byte*>(message.data()), message.size());
  if (head[0] >= 0) throw Error(static_cast<Error::Code>(head[0]), message);
}

// What rank 0's load_latest() found, as bytes: int64s and length-prefixed strings. Not JSON: paths
// and the messages that name them are any bytes, and JSON refuses invalid UTF-8.
struct LoadHead {
  enum Kind : std::int64_t { kFailed, kNone, kLoaded };
  std::int64_t kind = kFailed;
  std::int64_t code = 0;  // kFailed: the Error code, `error` its message
  std::string error;
  std::int64_t step = 0;
  std::string path;
  std::int64_t data_size = 0;
  std::int64_t saved_world = 0;
  std::int64_t table_size = 0;
  std::vector<std::string> skipped;
};

void put_int(std::string& out, std::int64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_head_string(std::string& out, const std::string& s) {
  put_int(out, static_cast<std::int64_t>(s.size()));
  out += s;
}

std::string encode_head(const LoadHead& h) {
  std::string out;
  for (std::int64_t v : {h.kind, h.code, h.step, h.data_size, h.saved_world, h.table_size}) {
    put_int(out, v);
  }
  put_head_string(out, h.error);
  put_head_string(out, h.path);
  put_int(out, static_cast<std::int64_t>(h.skipped.size()));
  for (const auto& s : h.skipped) put_head_string(out, s);
  return out;
}

// Every rank runs the same code on the same bytes: a damaged head fails on all of them alike.
class HeadReader {
 public:
  explicit HeadReader(const std::string& text) : text_(text) {}
  std::int64_t next_int() {
    std::int64_t v = 0;
    if (text_.size() - at_ < sizeof v) damaged();
    std::memcpy(&v, text_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string next_string() {
    const std::int64_t n = next_int();
    if (n < 0 || static_cast<std::uint64_t>(n) > text_.size() - at_) damaged();
    std::string s = text_.substr(at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return s;
  }

 private:
  [[noreturn]] static void damaged() {
    throw Error(Error::Code::kInternal,
                "dtrain: checkpoint: load_latest: rank 0's description arrived damaged");
  }
  const std::string& text_;
  std::size_t at_ = 0;
};

LoadHead decode_head(const std::string& text) {
  HeadReader r(text);
  LoadHead h;
  for (std::int64_t* v : {&h.kind, &h.code, &h.step, &h.data_size, &h.saved_world, &h.table_size}) {
    *v = r.next_int();
  }
  h.error = r.next_string();
  h.path = r.next_string();
  const std::int64_t n = r.next_int();
  for (std::int64_t i = 0; i < n; ++i) h.skipped.push_back(r.next_string());
  return h;
}

class SpanWriter {
 public:
  explicit SpanWriter(std::span<const std::byte> data) : data_(data) {}
  void operator()(CheckpointWriter& w) const { w.write(data_); }

 private:
  std::span<const std::byte> data_;
};

}  // namespace

CheckpointWriter::~CheckpointWriter() = default;

Checkpointer::Checkpointer(Context& ctx, std::string dir, CheckpointOptions options)
    : ctx_(&ctx), dir_(std::move(dir)), options_(std::move(options)) {
  if (dir_.empty()) {
    throw Error(Error::Code::kInvalid,
                "dtrain: checkpoint: directory; expected a path, got an empty string");
  }
  if (options_.keep < 0) {
    throw Error(Error::Code::kInvalid,
                "dtrain: checkpoint: keep; expected 0 (keep all) or more, got " +
                    std::to_string(options_.keep));
  }
}

void Checkpointer::save(std::int64_t step, std::span<const std::byte> data,
                        std::span<const std::byte> rank_data) {
  save_impl(step, SpanWriter(data), rank_data);
}

void Checkpointer::save(std::int64_t step, const std::function<void(CheckpointWriter&)>& write,
                        std::span<const std::byte> rank_data) {
  if (!write) {
    throw Error(Error::Code::kInvalid,
                "dtrain: checkpoint: save: writer; expected a callable, got an empty function");
  }
  save_impl(step, write, rank_data);
}

void Checkpointer::save_impl(std::int64_t step, const std::function<void(CheckpointWriter&)>& write,
                             std::span<const std::byte> rank_data) {
  const auto began = std::chrono::steady_clock::now();
  Comm& comm = ctx_->comm();
  const int rank = comm.rank();
  const int size = comm.size();

  // 1. Every rank sees every rank's step and blob size, and so reaches the same verdict.
  std::vector<std::int64_t> meta(2 * static_cast<std::size_t>(size));
  const std::int64_t mine[2] = {step, static_cast<std::int64_t>(rank_data.size())};
  comm.allgather(mine, meta.data(), 2, DType::kInt64);
  std::int64_t max_blob = 0;
  for (int r = 0; r < size; ++r) {
    if (meta[2 * r] != meta[0]) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: checkpoint: save: ranks disagree on the step; expected every rank to "
                  "save step " +
                      std::to_string(meta[0]) + " (rank 0), got " + std::to_string(meta[2 * r]) +
                      " from rank " + std::to_string(r));
    }
    max_blob = std::max(max_blob, meta[2 * r + 1]);
  }
  if (step < 0) {
    throw Error(Error::Code::kInvalid,
                "dtrain: checkpoint: save: step; expected 0 or more, got " + std::to_string(step));
  }

  // 2. The per-rank blobs, padded to the largest.
  std::vector<std::vector<std::byte>> blobs;
  if (max_blob > 0) {
    const auto width = static_cast<std::size_t>(max_blob);
    std::vector<std::byte> mine_padded(width);
    std::copy(rank_data.begin(), rank_data.end(), mine_padded.begin());
    std::vector<std::byte> all(width * static_cast<std::size_t>(size));
    comm.allgather(mine_padded.data(), all.data(), width, DType::kUInt8);
    for (int r = 0; r < size && rank == 0; ++r) {
      const auto* at = all.data() + static_cast<std::size_t>(r) * width;
      blobs.emplace_back(at, at + meta[2 * r + 1]);
    }
  } else if (rank == 0) {
    blobs.resize(static_cast<std::size_t>(size));
  }

  // 3. Rank 0 writes; everyone learns how it went.
  int code = -1;
  std::string message;
  if (rank == 0) {
    try {
      const auto table = ck::encode_rank_blobs(blobs);
      ck::write_checkpoint(dir_, step, write, table, static_cast<std::uint32_t>(size),
                           options_.keep, options_.discard_newer, discardable_, options_.on_stage);
      record_save(comm.engine().settings().run_dir, dir_, step, size, began);
    } catch (const Error& e) {
      code = static_cast<int>(e.code());
      message = e.what();
    } catch (const std::bad_alloc&) {
      code = static_cast<int>(Error::Code::kSystem);
      message = "dtrain: checkpoint: save of step " + std::to_string(step) + ": out of memory";
    } catch (const std::exception& e) {
      code = static_cast<int>(Error::Code::kInvalid);
      message = "dtrain: checkpoint: save of step " + std::to_string(step) +
                ": the writer callback failed: " + e.what();
    } catch (...) {
      code = static_cast<int>(Error::Code::kInvalid);
      message = "dtrain: checkpoint: save of step " + std::to_string(step) +
                ": the writer callback threw a non-standard exception";
    }
  }
  broadcast_outcome(comm, code, std::move(message));
}

std::optional<Checkpoint> Checkpointer::load_latest() {
  Comm& comm = ctx_->comm();
  const int rank = comm.rank();

  // Rank 0 reads; the outcome travels as a small description, then the bytes. Whatever rank 0
  // meets becomes that description, so it never skips the broadcasts the others wait in.
  ck::ReadOutcome outcome;
  std::vector<std::byte> table;
  std::string text;
  if (rank == 0) {
    LoadHead head;
    try {
      discardable_.clear();
      outcome = ck::read_newest_valid(dir_);
      discardable_ = outcome.skipped_steps;
      if (outcome.loaded) {
        table = ck::encode_rank_blobs(outcome.loaded->rank_blobs);
        head.kind = LoadHead::kLoaded;
        head.step = outcome.loaded->step;
        head.path = outcome.loaded->path;
        head.data_size = static_cast<std::int64_t>(outcome.loaded->data.size());
        head.saved_world = static_cast<std::int64_t>(outcome.loaded->rank_blobs.size());
        head.table_size = static_cast<std::int64_t>(table.size());
        head.skipped = outcome.skipped;
      } else {
        head.kind = LoadHead::kNone;
      }
    } catch (const Error& e) {
      head = {};
      head.code = static_cast<std::int64_t>(e.code());
      head.error = e.what();
    } catch (const std::bad_alloc&) {
      head = {};
      head.code = static_cast<std::int64_t>(Error::Code::kSystem);
      head.error = "dtrain: checkpoint: load_latest: out of memory reading " + dir_;
    } catch (const std::exception& e) {
      head = {};
      head.code = static_cast<std::int64_t>(Error::Code::kInternal);
      head.error = std::string("dtrain: checkpoint: load_latest: ") + e.what();
    }
    text = encode_head(head);
  }
  std::int64_t length = static_cast<std::int64_t>(text.size());
  comm.broadcast(std::span<std::int64_t>(&length, 1), 0);
  text.resize(static_cast<std::size_t>(length));
  broadcast_bytes(comm, reinterpret_cast<std::byte*>(text.data()), text.size());
  const LoadHead head = decode_head(text);

  if (head.kind == LoadHead::kFailed) throw Error(static_cast<Error::Code>(head.code), head.error);
  if (head.kind == LoadHead::kNone) return std::nullopt;

  Checkpoint c;
  c.step = head.step;
  c.path = head.path;
  c.saved_world = static_cast<int>(head.saved_world);
  c.skipped = head.skipped;
  if (rank == 0) {
    c.data = std::move(outcome.loaded->data);
  } else {
    c.data.resize(static_cast<std::size_t>(head.data_size));
    table.resize(static_cast<std::size_t>(head.table_size));
  }
  broadcast_bytes(comm, c.data.data(), c.data.size());
  broadcast_bytes(comm, table.data(), table.size());
  if (rank < c.saved_world) {
    auto blobs = ck::decode_rank_blobs(table, static_cast<std::uint32_t>(c.saved_world));
    if (!blobs) {
      throw Error(Error::Code::kInternal,
                  "dtrain: checkpoint: load_latest: the per-rank table arrived damaged");
    }
    c.rank_data = std::move((*blobs)[static_cast<std::size_t>(rank)]);
  }
  // The Context's Meter numbers its steps on from here (Meter::next_step()).
  comm.engine().resumed_step()->step.store(c.step);
  return c;
}

}  // namespace dtrain
