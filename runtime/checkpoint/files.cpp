// Why each fsync: rename() is atomic, but without fsync of the file first a crash of the machine
// can make the new name point at a file whose data never reached the disk, and without fsync of
// the directory the rename itself may be lost. A process killed at any point (SIGKILL) leaves at
// worst a ckpt-<step>.tmp, which readers never consider, so the previous checkpoint stays valid.
#include "checkpoint/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "checkpoint/format.hpp"

namespace dtrain::runtime::checkpoint {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void system_error(const std::string& path, const char* call, int err) {
  throw Error(Error::Code::kSystem,
              "dtrain: checkpoint: " + path + ": " + call + " failed: " + std::strerror(err));
}

void write_all(int fd, const std::string& path, const std::byte* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      system_error(path, "write", errno);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) system_error(path, "open", errno);
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    system_error(path, "fsync", err);
  }
  ::close(fd);
}

void fsync_dir(const std::string& dir) { fsync_path(dir, O_RDONLY | O_DIRECTORY); }

void rename_or_throw(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) system_error(from + " -> " + to, "rename", errno);
}

// Streams the payload to the open .tmp file, counting bytes and the CRC on the way.
class FileWriter final : public CheckpointWriter {
 public:
  FileWriter(int fd, std::string path, const std::function<void(SaveStage, std::uint64_t)>& stage)
      : fd_(fd), path_(std::move(path)), stage_(stage) {}
  void write(std::span<const std::byte> bytes) override {
    write_all(fd_, path_, bytes.data(), bytes.size());
    crc_ = crc32(crc_, bytes);
    bytes_ += bytes.size();
    if (stage_) stage_(SaveStage::kWriting, bytes_);
  }
  std::uint64_t bytes() const override { return bytes_; }
  std::uint32_t crc() const { return crc_; }

 private:
  int fd_;
  std::string path_;
  const std::function<void(SaveStage, std::uint64_t)>& stage_;
  std::uint64_t bytes_ = 0;
  std::uint32_t crc_ = 0;
};

// Removes the file on scope exit unless released: a failed save leaves no .tmp behind.
struct TmpGuard {
  std::string path;
  int fd = -1;
  ~TmpGuard() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
  }
};

void write_pointer(const std::string& dir, const std::string& target,
                   const std::function<void(SaveStage, std::uint64_t)>& on_stage) {
  const std::string tmp = dir + "/" + kLatestName + kTmpSuffix;
  TmpGuard guard{tmp, ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (guard.fd < 0) {
    guard.path.clear();
    system_error(tmp, "open", errno);
  }
  const std::string line = target + "\n";
  write_all(guard.fd, tmp, reinterpret_cast<const std::byte*>(line.data()), line.size());
  if (::fsync(guard.fd) != 0) system_error(tmp, "fsync", errno);
  ::close(guard.fd);
  guard.fd = -1;
  if (on_stage) on_stage(SaveStage::kPointerWritten, line.size());
  rename_or_throw(tmp, dir + "/" + kLatestName);
  guard.path.clear();
  fsync_dir(dir);
}

struct Entry {
  std::int64_t step;
  std::string name;
  std::string not_regular;  // empty for a regular file, else what it is ("a directory")
};

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "an unknown kind of file";
}

// The checkpoints in `dir` (not .tmp files, not `latest`), newest first. Symbolic links are
// followed; a name whose stat fails for another reason than a vanished file is an error, since
// neither a load nor a save can tell what it hides.
std::vector<Entry> list_checkpoints(const std::string& dir) {
  std::vector<Entry> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return out;
    system_error(dir, "opendir", ec.value());
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) system_error(dir, "readdir", ec.value());
    const std::string name = it->path().filename().string();
    const auto step = step_of(name);
    if (!step) continue;
    const std::string path = dir + "/" + name;
    struct stat st {};
    Entry e{*step, name, ""};
    if (::stat(path.c_str(), &st) == 0) {
      if (!S_ISREG(st.st_mode)) e.not_regular = kind_of(st.st_mode);
    } else if (errno != ENOENT) {
      system_error(path, "stat", errno);
    } else if (::lstat(path.c_str(), &st) == 0) {
      e.not_regular = "a dangling symbolic link";
    } else {
      continue;  // removed since the listing
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.step > b.step; });
  return out;
}

bool may_discard(std::int64_t step, bool discard_newer, std::span<const std::int64_t> discardable) {
  return discard_newer ||
         std::find(discardable.begin(), discardable.end(), step) != discardable.end();
}

// A restart from scratch in an old directory would otherwise wipe the old run's newer
// checkpoints at its first save (pruning below removes what is newer than the saved step).
void refuse_newer(const std::string& dir, std::int64_t step, bool discard_newer,
                  std::span<const std::int64_t> discardable) {
  for (const auto& e : list_checkpoints(dir)) {
    if (e.step <= step) break;
    if (!e.not_regular.empty() || may_discard(e.step, discard_newer, discardable)) continue;
    throw Error(Error::Code::kInvalid,
                "dtrain: checkpoint: save of step " + std::to_string(step) + ": " + dir +
                    " holds a newer checkpoint, " + dir + "/" + e.name + " (step " +
                    std::to_string(e.step) + "); expected a step above " + std::to_string(e.step) +
                    " (resume from it with load_latest() first), or set "
                    "CheckpointOptions::discard_newer to remove it, or save to another directory");
  }
}

// Keeps the `keep` newest checkpoints at or below `step`; removes the newer ones refuse_newer let
// through (the job resumed from an older checkpoint and moved past them: load_latest() must not
// prefer them to what was just saved) and stale .tmp files. Entries that are not regular files
// are not ours: never counted, never removed.
void prune(const std::string& dir, std::int64_t step, int keep, bool discard_newer,
           std::span<const std::int64_t> discardable) {
  int kept = 0;
  for (const auto& e : list_checkpoints(dir)) {
    if (!e.not_regular.empty()) continue;
    const bool remove =
        e.step > step ? may_discard(e.step, discard_newer, discardable) : keep > 0 && ++kept > keep;
    if (remove && ::unlink((dir + "/" + e.name).c_str()) != 0 && errno != ENOENT) {
      system_error(dir + "/" + e.name, "unlink", errno);
    }
  }
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 4 && name.ends_with(kTmpSuffix) && step_of(name.substr(0, name.size() - 4))) {
      ::unlink(it->path().c_str());
    }
  }
}

// create_directories() does not fsync: without an fsync of each new directory's parent, a
// machine crash can lose the directory, and every checkpoint saved in it, after a save returned.
void make_directories(const std::string& dir) {
  std::vector<fs::path> created;
  std::error_code ec;
  for (fs::path p(dir); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created.push_back(p);
  }
  fs::create_directories(dir, ec);
  if (ec) system_error(dir, "mkdir", ec.value());
  for (const auto& p : created) {
    const fs::path parent = p.parent_path();
    fsync_dir(parent.empty() ? std::string(".") : parent.string());
  }
}

}  // namespace

void write_checkpoint(const std::string& dir, std::int64_t step,
                      const std::function<void(CheckpointWriter&)>& write_data,
                      std::span<const std::byte> rank_table, std::uint32_t rank_count, int keep,
                      bool discard_newer, std::span<const std::int64_t> discardable,
                      const std::function<void(SaveStage, std::uint64_t)>& on_stage) {
  make_directories(dir);
  refuse_newer(dir, step, discard_newer, discardable);
  if (on_stage) on_stage(SaveStage::kBeforeWrite, 0);

  const std::string final_path = dir + "/" + file_name(step);
  const std::string tmp = final_path + kTmpSuffix;
  TmpGuard guard{tmp, ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (guard.fd < 0) {
    guard.path.clear();
    system_error(tmp, "open", errno);
  }
  // A zeroed header first: until the real one is written at the end, the file has no magic.
  const std::array<std::byte, kHeaderSize> blank{};
  write_all(guard.fd, tmp, blank.data(), blank.size());

  FileWriter writer(guard.fd, tmp, on_stage);
  write_data(writer);
  const std::uint64_t data_size = writer.bytes();
  if (!rank_table.empty()) writer.write(rank_table);

  Header h;
  h.step = step;
  h.payload_size = writer.bytes();
  h.data_size = data_size;
  h.rank_count = rank_count;
  h.payload_crc = writer.crc();
  const auto header = encode_header(h);
  if (::pwrite(guard.fd, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size())) {
    system_error(tmp, "pwrite", errno);
  }
  if (::fsync(guard.fd) != 0) system_error(tmp, "fsync", errno);
  if (::close(guard.fd) != 0) {
    guard.fd = -1;
    system_error(tmp, "close", errno);
  }
  guard.fd = -1;
  if (on_stage) on_stage(SaveStage::kWritten, h.payload_size);

  rename_or_throw(tmp, final_path);
  guard.path.clear();
  if (on_stage) on_stage(SaveStage::kRenamed, h.payload_size);
  fsync_dir(dir);
  if (on_stage) on_stage(SaveStage::kDirSynced, h.payload_size);

  write_pointer(dir, file_name(step), on_stage);
  if (on_stage) on_stage(SaveStage::kPointerUpdated, h.payload_size);

  prune(dir, step, keep, discard_newer, discardable);
  if (on_stage) on_stage(SaveStage::kPruned, h.payload_size);
}

std::optional<LoadedFile> verify(const std::string& path, std::int64_t name_step,
                                 std::span<const std::byte> bytes, std::string* error) {
  const auto decoded = decode_header(bytes);
  if (!decoded.header) {
    *error = decoded.error;
    return std::nullopt;
  }
  const Header& h = *decoded.header;
  const std::uint64_t have = bytes.size() - kHeaderSize;
  if (have != h.payload_size) {
    *error = "size mismatch; the header promises " + std::to_string(h.payload_size) +
             " payload bytes, the file has " + std::to_string(have) + " (a torn write)";
    return std::nullopt;
  }
  if (h.step != name_step) {
    *error = "step mismatch; the name says " + std::to_string(name_step) + ", the header " +
             std::to_string(h.step);
    return std::nullopt;
  }
  const auto payload = bytes.subspan(kHeaderSize);
  const std::uint32_t crc = crc32(0, payload);
  if (crc != h.payload_crc) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "payload checksum mismatch; expected CRC-32 %08x, got %08x",
                  h.payload_crc, crc);
    *error = buf;
    return std::nullopt;
  }
  auto blobs = decode_rank_blobs(payload.subspan(h.data_size), h.rank_count);
  if (!blobs) {
    *error = "per-rank table does not add up to " + std::to_string(h.rank_count) + " blobs";
    return std::nullopt;
  }
  LoadedFile out;
  out.step = h.step;
  out.path = path;
  out.data.assign(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(h.data_size));
  out.rank_blobs = std::move(*blobs);
  return out;
}

std::optional<std::vector<std::byte>> read_file(const std::string& path) {
  // O_NONBLOCK: a FIFO put in place since the listing must not block the open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    system_error(path, "open", errno);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) system_error(path, "fstat", errno);
  if (!S_ISREG(st.st_mode)) {
    throw Error(Error::Code::kSystem,
                "dtrain: checkpoint: " + path + ": " + kind_of(st.st_mode) + " since the listing");
  }
  std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t have = 0;
  while (have < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + have, bytes.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      system_error(path, "read", errno);
    }
    if (n == 0) break;  // shrank since fstat: verify() reports the torn file
    have += static_cast<std::size_t>(n);
  }
  bytes.resize(have);
  return bytes;
}

ReadOutcome read_newest_valid(const std::string& dir, const FileReader& read) {
  ReadOutcome outcome;
  const auto entries = list_checkpoints(dir);
  for (const auto& e : entries) {
    const std::string path = dir + "/" + e.name;
    std::string error = e.not_regular.empty() ? "" : "not a regular file (" + e.not_regular + ")";
    if (error.empty()) {
      std::optional<std::vector<std::byte>> bytes;
      try {
        bytes = read(path);
      } catch (const Error& failed) {
        // A failed read says nothing about the file: falling back would resume from an older
        // step, and the next save would then remove this one.
        throw Error(failed.code(),
                    std::string(failed.what()) +
                        "; not falling back to an older checkpoint past one that cannot be read: "
                        "fix the file system (or move the file away) and load again");
      }
      if (!bytes) continue;
      if (auto loaded = verify(path, e.step, *bytes, &error)) {
        outcome.loaded = std::move(loaded);
        return outcome;
      }
    }
    outcome.skipped.push_back(path + ": " + error);
    if (e.not_regular.empty()) outcome.skipped_steps.push_back(e.step);
  }
  if (!outcome.skipped.empty()) {
    std::string message = "dtrain: checkpoint: no valid checkpoint in " + dir + "; " +
                          std::to_string(outcome.skipped.size()) + " found, none verifies:";
    for (const auto& s : outcome.skipped) message += "\n  " + s;
    throw Error(Error::Code::kSystem, message);
  }
  return outcome;
}

}  // namespace dtrain::runtime::checkpoint
