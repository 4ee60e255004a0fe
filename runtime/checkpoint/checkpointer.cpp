// The collective half of dtrain::Checkpointer. A save is three collectives whatever happens on
// rank 0: an allgather of (step, blob size) that every rank checks the same way, an allgather of
// the per-rank blobs (skipped when all are empty, which every rank knows from the first), and a
// broadcast of rank 0's outcome. So rank 0 never runs a collective the others do not, and a
// failure on rank 0 reaches every rank as the same Error.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "checkpoint/files.hpp"
#include "checkpoint/format.hpp"
#include "dtrain/checkpoint.hpp"

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

// Rank 0's outcome, sent to every rank: a code (-1: success) and a message.
void broadcast_outcome(Comm& comm, int code, std::string message) {
  std::int64_t head[2] = {code, static_cast<std::int64_t>(message.size())};
  comm.broadcast(std::span<std::int64_t>(head), 0);
  message.resize(static_cast<std::size_t>(head[1]));
  broadcast_bytes(comm, reinterpret_cast<std::byte*>(message.data()), message.size());
  if (head[0] >= 0) throw Error(static_cast<Error::Code>(head[0]), message);
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
                           options_.keep, options_.on_stage);
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

  // Rank 0 reads; the outcome travels as a small JSON description, then the bytes.
  ck::ReadOutcome outcome;
  nlohmann::json head;
  std::vector<std::byte> table;
  if (rank == 0) {
    try {
      outcome = ck::read_newest_valid(dir_);
      if (outcome.loaded) {
        head["step"] = outcome.loaded->step;
        head["path"] = outcome.loaded->path;
        head["data_size"] = outcome.loaded->data.size();
        head["saved_world"] = outcome.loaded->rank_blobs.size();
        head["skipped"] = outcome.skipped;
        table = ck::encode_rank_blobs(outcome.loaded->rank_blobs);
        head["table_size"] = table.size();
      } else {
        head["none"] = true;
      }
    } catch (const Error& e) {
      head = {{"code", static_cast<int>(e.code())}, {"error", e.what()}};
    } catch (const std::exception& e) {
      head = {{"code", static_cast<int>(Error::Code::kSystem)},
              {"error", std::string("dtrain: checkpoint: load_latest: ") + e.what()}};
    }
  }
  std::string text = rank == 0 ? head.dump() : std::string();
  std::int64_t length = static_cast<std::int64_t>(text.size());
  comm.broadcast(std::span<std::int64_t>(&length, 1), 0);
  text.resize(static_cast<std::size_t>(length));
  broadcast_bytes(comm, reinterpret_cast<std::byte*>(text.data()), text.size());
  if (rank != 0) head = nlohmann::json::parse(text);

  if (head.contains("error")) {
    throw Error(static_cast<Error::Code>(head["code"].get<int>()),
                head["error"].get<std::string>());
  }
  if (head.contains("none")) return std::nullopt;

  Checkpoint c;
  c.step = head["step"].get<std::int64_t>();
  c.path = head["path"].get<std::string>();
  c.saved_world = head["saved_world"].get<int>();
  c.skipped = head["skipped"].get<std::vector<std::string>>();
  if (rank == 0) {
    c.data = std::move(outcome.loaded->data);
  } else {
    c.data.resize(head["data_size"].get<std::size_t>());
    table.resize(head["table_size"].get<std::size_t>());
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
  return c;
}

}  // namespace dtrain
