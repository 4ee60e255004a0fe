// The checkpoint file format (format.cpp): header and rank-table round trips, and the message for
// each way a header can be wrong.
#include "checkpoint/format.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace dtrain::runtime::checkpoint {
namespace {

std::vector<std::byte> bytes_of(const std::string& text) {
  std::vector<std::byte> out;
  for (char c : text) out.push_back(static_cast<std::byte>(c));
  return out;
}

Header sample_header() {
  Header h;
  h.step = -42;
  h.payload_size = 1000;
  h.data_size = 600;
  h.rank_count = 3;
  h.payload_crc = 0xdeadbeef;
  return h;
}

TEST(CheckpointFormat, HeaderRoundTrips) {
  const auto encoded = encode_header(sample_header());
  const HeaderOrError decoded = decode_header(encoded);
  ASSERT_TRUE(decoded.header.has_value()) << decoded.error;
  EXPECT_EQ(decoded.error, "");
  EXPECT_EQ(decoded.header->step, -42);
  EXPECT_EQ(decoded.header->payload_size, 1000u);
  EXPECT_EQ(decoded.header->data_size, 600u);
  EXPECT_EQ(decoded.header->rank_count, 3u);
  EXPECT_EQ(decoded.header->payload_crc, 0xdeadbeefu);
}

TEST(CheckpointFormat, HeaderLayoutIsLittleEndianAfterTheMagic) {
  const auto encoded = encode_header(sample_header());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(encoded.data()), 8), "DTRAINCK");
  EXPECT_EQ(encoded[8], std::byte{1});  // version 1
  EXPECT_EQ(encoded[9], std::byte{0});
  EXPECT_EQ(encoded[12], std::byte{64});    // header size
  EXPECT_EQ(encoded[24], std::byte{0xe8});  // payload size 1000 = 0x03e8
  EXPECT_EQ(encoded[25], std::byte{0x03});
  EXPECT_EQ(encoded[44], std::byte{0xef});  // payload CRC, low byte first
  for (std::size_t i = 48; i < 60; ++i) EXPECT_EQ(encoded[i], std::byte{0}) << i;
}

TEST(CheckpointFormat, ShortInputIsRefused) {
  const auto encoded = encode_header(sample_header());
  const HeaderOrError decoded = decode_header(std::span(encoded).first(63));
  EXPECT_FALSE(decoded.header.has_value());
  EXPECT_EQ(decoded.error, "file too short for a header; expected at least 64 bytes, got 63");
}

TEST(CheckpointFormat, WrongMagicIsRefused) {
  auto encoded = encode_header(sample_header());
  encoded[0] = std::byte{'X'};
  const HeaderOrError decoded = decode_header(encoded);
  EXPECT_FALSE(decoded.header.has_value());
  EXPECT_EQ(decoded.error, "not a dtrain checkpoint (no DTRAINCK magic at the start)");
}

TEST(CheckpointFormat, UnknownVersionIsRefused) {
  auto encoded = encode_header(sample_header());
  encoded[8] = std::byte{7};
  const HeaderOrError decoded = decode_header(encoded);
  EXPECT_FALSE(decoded.header.has_value());
  EXPECT_EQ(decoded.error, "unknown format version; expected 1, got 7");
}

TEST(CheckpointFormat, DamagedHeaderFailsItsChecksum) {
  auto encoded = encode_header(sample_header());
  encoded[16] ^= std::byte{1};  // the step
  const HeaderOrError decoded = decode_header(encoded);
  EXPECT_FALSE(decoded.header.has_value());
  EXPECT_EQ(decoded.error, "header checksum mismatch (a damaged header)");

  auto bad_crc = encode_header(sample_header());
  bad_crc[60] ^= std::byte{0xff};  // the stored header CRC itself
  EXPECT_EQ(decode_header(bad_crc).error, "header checksum mismatch (a damaged header)");
}

TEST(CheckpointFormat, SharedDataLargerThanThePayloadIsRefused) {
  Header h = sample_header();
  h.data_size = 1001;
  const HeaderOrError decoded = decode_header(encode_header(h));
  EXPECT_FALSE(decoded.header.has_value());
  EXPECT_EQ(decoded.error, "shared data size 1001 larger than the payload 1000");
}

TEST(CheckpointFormat, Crc32IsZlibsAndContinues) {
  const auto text = bytes_of("123456789");
  EXPECT_EQ(crc32(0, text), 0xcbf43926u);  // the standard CRC-32 check value
  EXPECT_EQ(crc32(crc32(0, std::span(text).first(4)), std::span(text).subspan(4)), 0xcbf43926u);
  EXPECT_EQ(crc32(0, {}), 0u);
}

TEST(CheckpointFormat, RankBlobsRoundTrip) {
  const std::vector<std::vector<std::byte>> blobs = {bytes_of("ab"), {}, bytes_of("xyz")};
  const auto table = encode_rank_blobs(blobs);
  ASSERT_EQ(table.size(), 8u + 2 + 8 + 0 + 8 + 3);
  EXPECT_EQ(table[0], std::byte{2});
  const auto decoded = decode_rank_blobs(table, 3);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, blobs);
  EXPECT_EQ(decode_rank_blobs(encode_rank_blobs({}), 0)->size(), 0u);
}

TEST(CheckpointFormat, RankBlobsThatDoNotAddUpAreRefused) {
  const auto table = encode_rank_blobs({bytes_of("ab"), bytes_of("xyz")});
  EXPECT_FALSE(decode_rank_blobs(table, 3).has_value());  // a rank too many
  EXPECT_FALSE(decode_rank_blobs(table, 1).has_value());  // bytes left over
  EXPECT_FALSE(decode_rank_blobs(std::span(table).first(table.size() - 1), 2).has_value());
  EXPECT_FALSE(decode_rank_blobs(std::span(table).first(4), 1).has_value());  // a cut size
}

TEST(CheckpointFormat, FileNamesPadTheStepAndParseBack) {
  EXPECT_EQ(file_name(0), "ckpt-000000000000");
  EXPECT_EQ(file_name(1234), "ckpt-000000001234");
  EXPECT_EQ(file_name(1'000'000'000'000), "ckpt-1000000000000");
  const auto max = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(file_name(max), "ckpt-9223372036854775807");
  EXPECT_EQ(step_of(file_name(max)), max);
  EXPECT_EQ(step_of("ckpt-000000001234"), 1234);
  EXPECT_EQ(step_of("ckpt-7"), 7);  // any digit count
}

TEST(CheckpointFormat, StepOfRefusesOtherNames) {
  EXPECT_EQ(step_of("ckpt-"), std::nullopt);
  EXPECT_EQ(step_of("ckpt-12.tmp"), std::nullopt);
  EXPECT_EQ(step_of("ckpt--12"), std::nullopt);
  EXPECT_EQ(step_of("ckpt-+12"), std::nullopt);
  EXPECT_EQ(step_of("ckpt-9223372036854775808"), std::nullopt);  // INT64_MAX + 1
  EXPECT_EQ(step_of("latest"), std::nullopt);
  EXPECT_EQ(step_of("xckpt-12"), std::nullopt);
}

}  // namespace
}  // namespace dtrain::runtime::checkpoint
