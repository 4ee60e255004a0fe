#include "idx.hpp"

#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

namespace fmnist {
namespace {

constexpr std::uint8_t kUnsignedByte = 0x08;
constexpr std::size_t kMagicBytes = 4;
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 40;

[[noreturn]] void fail(std::string_view name, const std::string& problem) {
  throw DataError(std::string(name) + ": " + problem);
}

std::string hex_bytes(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

// zlib's gzerror() text starts with the path given to gzopen(); the caller names the file itself.
std::string zlib_message(const std::string& path, const char* message) {
  const std::string text = message;
  return text.rfind(path + ": ", 0) == 0 ? text.substr(path.size() + 2) : text;
}

std::uint32_t big_endian_u32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

}  // namespace

IdxArray parse_idx(std::span<const std::uint8_t> bytes, std::string_view name, int expected_rank) {
  if (bytes.size() < kMagicBytes) {
    fail(name, "truncated IDX file; expected a 4-byte magic number, got " +
                   std::to_string(bytes.size()) + " bytes");
  }
  const int rank = bytes[3];
  if (bytes[0] != 0 || bytes[1] != 0 || bytes[2] != kUnsignedByte || rank != expected_rank) {
    fail(name, "bad IDX magic number; expected " +
                   hex_bytes(std::array<std::uint8_t, 4>{
                       0, 0, kUnsignedByte, static_cast<std::uint8_t>(expected_rank)}) +
                   " (unsigned bytes, " + std::to_string(expected_rank) + " dimension" +
                   (expected_rank == 1 ? "" : "s") + "), got " +
                   hex_bytes(bytes.first(kMagicBytes)));
  }
  const std::size_t header = kMagicBytes + 4 * static_cast<std::size_t>(rank);
  if (bytes.size() < header) {
    fail(name, "truncated IDX header; expected " + std::to_string(header) + " bytes, got " +
                   std::to_string(bytes.size()));
  }
  IdxArray out;
  // Saturates past kMaxElements, so a corrupt header can neither overflow nor ask for terabytes.
  const std::uint64_t limit = kMaxElements;
  std::uint64_t elements = 1;
  std::string shape;
  for (int d = 0; d < rank; ++d) {
    const std::uint32_t dim = big_endian_u32(bytes.data() + kMagicBytes + 4 * d);
    out.dims.push_back(dim);
    shape += (d == 0 ? "" : " x ") + std::to_string(dim);
    elements = (dim != 0 && elements > limit / dim) ? limit + 1 : elements * dim;
  }
  const std::size_t available = bytes.size() - header;
  if (elements > available) {
    fail(name,
         "truncated IDX data; the header says " + shape + " (" +
             (elements > limit ? "more than " + std::to_string(limit) : std::to_string(elements)) +
             " bytes), got " + std::to_string(available) + " bytes after the header");
  }
  if (elements < available) {
    fail(name, "trailing bytes after IDX data; the header says " + shape + " (" +
                   std::to_string(elements) + " bytes), got " + std::to_string(available) +
                   " bytes after the header");
  }
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return out;
}

std::vector<std::uint8_t> read_gzip_file(const std::string& path) {
  errno = 0;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) {
    throw DataError(path + ": cannot open: " +
                    (errno != 0 ? std::strerror(errno) : "not enough memory for zlib"));
  }
  std::vector<std::uint8_t> out;
  constexpr unsigned kChunk = 1u << 20;
  for (;;) {
    const std::size_t used = out.size();
    out.resize(used + kChunk);
    const int got = gzread(file.get(), out.data() + used, kChunk);
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file.get(), &code);
      throw DataError(path + ": cannot decompress: " +
                      (code == Z_ERRNO ? std::strerror(errno) : zlib_message(path, message)));
    }
    out.resize(used + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  // gzread stops quietly at the end of a cut-short stream; zlib reports it only here.
  int code = 0;
  const char* message = gzerror(file.get(), &code);
  if (code != Z_OK) throw DataError(path + ": cannot decompress: " + zlib_message(path, message));
  return out;
}

}  // namespace fmnist
