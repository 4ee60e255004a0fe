// The checkpoint file format (version 1), pure encoding and verification, no I/O.
//
//   offset  size  field (little-endian)
//   0       8     magic "DTRAINCK"
//   8       4     format version (1)
//   12      4     header size (64)
//   16      8     step (signed)
//   24      8     payload size in bytes (what follows the header)
//   32      8     size of the shared data (the first part of the payload)
//   40      4     rank count: per-rank blobs that follow the shared data
//   44      4     CRC-32 (zlib) of the payload
//   48      12    reserved, zero
//   60      4     CRC-32 of bytes 0..59 (the header itself)
//
// payload = shared data, then for each rank r in order: 8-byte size, then that many bytes.
//
// The header is written last (the file is first written with a zeroed header, see files.cpp), so
// a file cut short anywhere fails one of: magic, header CRC, payload size against the file size,
// payload CRC.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dtrain::runtime::checkpoint {

inline constexpr std::array<char, 8> kMagic = {'D', 'T', 'R', 'A', 'I', 'N', 'C', 'K'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kHeaderSize = 64;

struct Header {
  std::int64_t step = 0;
  std::uint64_t payload_size = 0;
  std::uint64_t data_size = 0;
  std::uint32_t rank_count = 0;
  std::uint32_t payload_crc = 0;
};

std::array<std::byte, kHeaderSize> encode_header(const Header& h);
// The header, or why these bytes are not one (wrong magic, unknown version, header checksum).
struct HeaderOrError {
  std::optional<Header> header;
  std::string error;
};
HeaderOrError decode_header(std::span<const std::byte> bytes);

// zlib's crc32, continued from `crc` (0 to start).
std::uint32_t crc32(std::uint32_t crc, std::span<const std::byte> bytes);

// The per-rank table that follows the shared data in the payload.
std::vector<std::byte> encode_rank_blobs(const std::vector<std::vector<std::byte>>& blobs);
// Splits `table` into `count` blobs; empty optional when the sizes do not add up.
std::optional<std::vector<std::vector<std::byte>>> decode_rank_blobs(
    std::span<const std::byte> table, std::uint32_t count);

// ckpt-<step> with the step zero-padded to 12 digits (up to 19 for steps of 10^12 and more, up
// to INT64_MAX); the parser accepts any digit count whose value fits an int64, and nothing else
// (no sign, no suffix). Readers sort by the parsed step, never by name.
std::string file_name(std::int64_t step);
std::optional<std::int64_t> step_of(const std::string& name);
inline constexpr const char* kTmpSuffix = ".tmp";
inline constexpr const char* kLatestName = "latest";

}  // namespace dtrain::runtime::checkpoint
