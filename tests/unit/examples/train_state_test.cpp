#include "train_state.hpp"

#include "idx.hpp"

#include <gtest/gtest.h>

#include "support.hpp"

#include <string>

namespace fmnist {
namespace {

const std::vector<float> kParams = {1.5f, -2.0f, 3.25f};
const std::vector<float> kVelocity = {0.5f, 0.25f, -1.0f};
const TrainPosition kPos{2, 17, 953, 12.5, 128, 2026};

using testing::message_of;

TEST(TrainState, RoundTripsPositionParametersAndMomentum) {
  const auto bytes = encode_state(kPos, kParams, kVelocity);
  std::vector<float> p(3), v(3);
  const TrainPosition pos = decode_state(bytes, "c", p, v);
  EXPECT_EQ(pos.epoch, 2);
  EXPECT_EQ(pos.step_in_epoch, 17);
  EXPECT_EQ(pos.global_step, 953);
  EXPECT_EQ(pos.epoch_loss_sum, 12.5);
  EXPECT_EQ(pos.global_batch, 128);
  EXPECT_EQ(pos.seed, 2026u);
  EXPECT_EQ(p, kParams);
  EXPECT_EQ(v, kVelocity);
}

TEST(TrainState, DamagedFilesAreRefusedWithTheirName) {
  auto bytes = encode_state(kPos, kParams, kVelocity);
  std::vector<float> p(3), v(3);
  auto flipped = bytes;
  flipped[60] ^= 1;
  EXPECT_EQ(message_of([&] { decode_state(flipped, "ck.bin", p, v); }),
            "ck.bin: checkpoint checksum mismatch (a damaged file)");
  auto cut = bytes;
  cut.resize(bytes.size() - 5);
  EXPECT_EQ(message_of([&] { decode_state(cut, "ck.bin", p, v); }),
            "ck.bin: checkpoint size; expected " + std::to_string(bytes.size()) + " bytes, got " +
                std::to_string(cut.size()));
  cut.resize(10);
  EXPECT_EQ(message_of([&] { decode_state(cut, "ck.bin", p, v); }),
            "ck.bin: truncated checkpoint; expected a 72-byte header, got 10 bytes");
  auto magic = bytes;
  magic[0] = 'X';
  EXPECT_EQ(message_of([&] { decode_state(magic, "ck.bin", p, v); }),
            "ck.bin: not a Fashion-MNIST example checkpoint; expected magic FMNISTCK");
  std::vector<float> p4(4), v4(4);
  EXPECT_EQ(message_of([&] { decode_state(bytes, "ck.bin", p4, v4); }),
            "ck.bin: checkpoint of a different model; expected 4 parameters, got 3");
}

}  // namespace
}  // namespace fmnist
