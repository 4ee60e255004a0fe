#include "checkpoint/format.hpp"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace dtrain::runtime::checkpoint {

namespace {

template <typename T>
void put(std::byte* at, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    at[i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
  }
}

template <typename T>
T get(const std::byte* at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    v |= static_cast<std::uint64_t>(std::to_integer<unsigned>(at[i])) << (8 * i);
  }
  return static_cast<T>(v);
}

constexpr std::size_t kHeaderCrcOffset = kHeaderSize - 4;

}  // namespace

std::uint32_t crc32(std::uint32_t crc, std::span<const std::byte> bytes) {
  // zlib takes a uInt length: feed it in pieces below 4 GiB.
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  std::size_t left = bytes.size();
  uLong c = crc;
  while (left > 0) {
    const auto n = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
    c = ::crc32(c, p, n);
    p += n;
    left -= n;
  }
  return static_cast<std::uint32_t>(c);
}

std::array<std::byte, kHeaderSize> encode_header(const Header& h) {
  std::array<std::byte, kHeaderSize> out{};
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  put<std::uint32_t>(out.data() + 8, kFormatVersion);
  put<std::uint32_t>(out.data() + 12, static_cast<std::uint32_t>(kHeaderSize));
  put<std::int64_t>(out.data() + 16, h.step);
  put<std::uint64_t>(out.data() + 24, h.payload_size);
  put<std::uint64_t>(out.data() + 32, h.data_size);
  put<std::uint32_t>(out.data() + 40, h.rank_count);
  put<std::uint32_t>(out.data() + 44, h.payload_crc);
  put<std::uint32_t>(out.data() + kHeaderCrcOffset,
                     crc32(0, std::span(out.data(), kHeaderCrcOffset)));
  return out;
}

HeaderOrError decode_header(std::span<const std::byte> bytes) {
  if (bytes.size() < kHeaderSize) {
    return {std::nullopt, "file too short for a header; expected at least " +
                              std::to_string(kHeaderSize) + " bytes, got " +
                              std::to_string(bytes.size())};
  }
  if (std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    return {std::nullopt, "not a dtrain checkpoint (no DTRAINCK magic at the start)"};
  }
  const auto version = get<std::uint32_t>(bytes.data() + 8);
  if (version != kFormatVersion) {
    return {std::nullopt, "unknown format version; expected " + std::to_string(kFormatVersion) +
                              ", got " + std::to_string(version)};
  }
  const auto stored = get<std::uint32_t>(bytes.data() + kHeaderCrcOffset);
  const auto computed = crc32(0, bytes.first(kHeaderCrcOffset));
  if (stored != computed || get<std::uint32_t>(bytes.data() + 12) != kHeaderSize) {
    return {std::nullopt, "header checksum mismatch (a damaged header)"};
  }
  Header h;
  h.step = get<std::int64_t>(bytes.data() + 16);
  h.payload_size = get<std::uint64_t>(bytes.data() + 24);
  h.data_size = get<std::uint64_t>(bytes.data() + 32);
  h.rank_count = get<std::uint32_t>(bytes.data() + 40);
  h.payload_crc = get<std::uint32_t>(bytes.data() + 44);
  if (h.data_size > h.payload_size) {
    return {std::nullopt, "shared data size " + std::to_string(h.data_size) +
                              " larger than the payload " + std::to_string(h.payload_size)};
  }
  return {h, ""};
}

std::vector<std::byte> encode_rank_blobs(const std::vector<std::vector<std::byte>>& blobs) {
  std::size_t total = 0;
  for (const auto& b : blobs) total += 8 + b.size();
  std::vector<std::byte> out(total);
  std::byte* at = out.data();
  for (const auto& b : blobs) {
    put<std::uint64_t>(at, b.size());
    at += 8;
    if (!b.empty()) std::memcpy(at, b.data(), b.size());
    at += b.size();
  }
  return out;
}

std::optional<std::vector<std::vector<std::byte>>> decode_rank_blobs(
    std::span<const std::byte> table, std::uint32_t count) {
  std::vector<std::vector<std::byte>> out;
  std::size_t at = 0;
  for (std::uint32_t r = 0; r < count; ++r) {
    if (table.size() - at < 8) return std::nullopt;
    const auto n = get<std::uint64_t>(table.data() + at);
    at += 8;
    if (table.size() - at < n) return std::nullopt;
    out.emplace_back(table.begin() + static_cast<std::ptrdiff_t>(at),
                     table.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
  }
  if (at != table.size()) return std::nullopt;
  return out;
}

std::string file_name(std::int64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "ckpt-%012lld", static_cast<long long>(step));
  return buf;
}

std::optional<std::int64_t> step_of(const std::string& name) {
  constexpr std::string_view kPrefix = "ckpt-";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) {
    return std::nullopt;
  }
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  if (!std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  // Any digit count whose value fits: file_name writes up to 19 digits (INT64_MAX), and names
  // written by older versions (12 digits, or more for big steps) stay readable.
  std::int64_t step = 0;
  const auto [end, ec] = std::from_chars(first, last, step);
  if (ec != std::errc() || end != last) return std::nullopt;
  return step;
}

}  // namespace dtrain::runtime::checkpoint
