// PieceTuner: which piece size each large allreduce uses, when the ranks must agree, and what they
// then keep; all ranks drive it with the same calls, so these sequences are what every rank sees.
#include "comm/algorithms/piece_tuner.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using dtrain::runtime::PieceTuner;
constexpr std::size_t kMiB = std::size_t{1} << 20;

// Runs one round of trials where a piece of `fast` bytes moves `bytes` in 1 s and the others in
// 3 s; returns the pieces used, in order.
std::vector<std::size_t> trial_round(PieceTuner& t, std::size_t fast, std::size_t bytes) {
  std::vector<std::size_t> used;
  for (;;) {
    const std::size_t piece = t.piece(bytes);
    used.push_back(piece);
    if (t.record(bytes, piece == fast ? 1.0 : 3.0)) break;
  }
  return used;
}

TEST(PieceTuner, TriesEveryCandidateInTurnThenAsksForAgreement) {
  PieceTuner t;
  EXPECT_EQ(trial_round(t, 4 * kMiB, 64 * kMiB),
            (std::vector<std::size_t>{kMiB, 4 * kMiB, 16 * kMiB, kMiB, 4 * kMiB, 16 * kMiB}));
  const auto rates = t.rates();
  EXPECT_DOUBLE_EQ(rates[0], 64.0 * kMiB / 3.0);
  EXPECT_DOUBLE_EQ(rates[1], 64.0 * kMiB);
  EXPECT_DOUBLE_EQ(rates[2], 64.0 * kMiB / 3.0);
}

TEST(PieceTuner, KeepsTheAgreedFastestForItsCallsThenTriesAgain) {
  PieceTuner t;
  trial_round(t, 4 * kMiB, 64 * kMiB);
  // Another rank was slower with 4 MiB: the agreed (minimum) rates favour 16 MiB.
  t.decide({1.0, 2.0, 5.0});
  EXPECT_EQ(t.chosen(), 16 * kMiB);
  for (int i = 0; i < PieceTuner::kExploitCalls; ++i) {
    ASSERT_EQ(t.piece(64 * kMiB), 16 * kMiB) << "call " << i;
    ASSERT_FALSE(t.record(64 * kMiB, 1.0));
  }
  // The machine changed: the next round finds 1 MiB fastest.
  EXPECT_EQ(trial_round(t, kMiB, 32 * kMiB).size(), 6u);
  t.decide(t.rates());
  EXPECT_EQ(t.piece(32 * kMiB), kMiB);
}

TEST(PieceTuner, TieGoesToTheSmallestPiece) {
  PieceTuner t;
  trial_round(t, 0, 64 * kMiB);  // every candidate equally slow
  t.decide(t.rates());
  EXPECT_EQ(t.piece(64 * kMiB), kMiB);
}

TEST(PieceTuner, TrialsUseOneMessageSizeOthersUseTheChosenPiece) {
  PieceTuner t;
  // Below 16 MiB the candidates would cut alike: such calls never count as trials.
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(t.piece(8 * kMiB), kMiB);
    ASSERT_FALSE(t.record(8 * kMiB, 1.0));
  }
  EXPECT_EQ(t.piece(64 * kMiB), kMiB);  // the first trial fixes the round's size: 64 MiB
  EXPECT_FALSE(t.record(64 * kMiB, 1.0));
  EXPECT_EQ(t.piece(32 * kMiB), kMiB);  // another size meanwhile: the chosen piece, not counted
  EXPECT_FALSE(t.record(32 * kMiB, 9.0));
  EXPECT_EQ(t.piece(64 * kMiB), 4 * kMiB);  // the round goes on where it was
  EXPECT_FALSE(t.record(64 * kMiB, 1.0));
  EXPECT_EQ(t.piece(64 * kMiB), 16 * kMiB);
}

TEST(PieceTuner, AFixedSizeNeverTrials) {
  PieceTuner t(2 * kMiB);
  EXPECT_FALSE(t.tuning());
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(t.piece(64 * kMiB), 2 * kMiB);
    ASSERT_FALSE(t.record(64 * kMiB, 1.0));
  }
}

}  // namespace
