// The shared-memory ring (shm_ring.hpp): bytes come out whole and in order across the wrap, one
// writer and one reader at once; a full ring takes nothing more; the name is gone once the reader
// has it; a side that said it sleeps is owed exactly one wake-up, and itself a second look a
// millisecond after its flag went up; two pieces go in both or neither; no byte of an earlier lap
// reads as a record; a record peeked whole is the bytes written.
#include "comm/transport/shm/shm_ring.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

namespace {

using dtrain::runtime::ShmRing;

std::vector<char> pattern(std::size_t n) {
  std::vector<char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + 7) % 251);
  return v;
}

TEST(ShmRing, AStreamLargerThanTheRingArrivesWholeAndInOrder) {
  ShmRing writer = ShmRing::create();
  ShmRing reader = ShmRing::open(writer.name());
  // 16 rings' worth in odd pieces on both sides, so every wrap position is crossed.
  const std::vector<char> sent = pattern(ShmRing::kBytes * 16 + 13);
  std::vector<char> got(sent.size());
  std::thread w([&] {
    std::size_t at = 0;
    while (at < sent.size()) {
      at += writer.write(sent.data() + at, std::min<std::size_t>(4093, sent.size() - at));
    }
  });
  std::size_t at = 0;
  while (at < got.size()) {
    at += reader.read(got.data() + at, std::min<std::size_t>(1021, got.size() - at));
  }
  w.join();
  EXPECT_TRUE(got == sent);
  EXPECT_TRUE(reader.empty());
}

TEST(ShmRing, AFullRingTakesNothingMoreUntilARecordIsReadWhole) {
  ShmRing writer = ShmRing::create();
  ShmRing reader = ShmRing::open(writer.name());
  const std::vector<char> bytes = pattern(ShmRing::kBytes + 100);
  // Records of kMaxRecord at most, each with its mark and length: less than the ring's bytes.
  std::size_t in = 0;
  while (const std::size_t n = writer.write(bytes.data() + in, bytes.size() - in)) in += n;
  EXPECT_GT(in, ShmRing::kBytes * 9 / 10);
  EXPECT_LT(in, ShmRing::kBytes);
  EXPECT_TRUE(writer.full());
  EXPECT_EQ(writer.write(bytes.data(), 1), 0u);
  std::vector<char> out(10);
  EXPECT_EQ(reader.read(out.data(), out.size()), 10u);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin()));
  EXPECT_EQ(writer.write(bytes.data(), 100), 0u);  // the first record is not read whole yet
  out.assign(in, 0);
  EXPECT_EQ(reader.read(out.data() + 10, in - 10), in - 10);
  EXPECT_TRUE(std::equal(out.begin() + 10, out.end(), bytes.begin() + 10));
  EXPECT_TRUE(reader.empty());
  EXPECT_FALSE(writer.full());
  EXPECT_EQ(writer.write(bytes.data(), 100), 100u);
}

TEST(ShmRing, TwoPiecesGoInBothOrNeitherAcrossTheWrap) {
  ShmRing writer = ShmRing::create();
  ShmRing reader = ShmRing::open(writer.name());
  const std::vector<char> header = pattern(32);
  const std::vector<char> body = pattern(1000);
  // Lines short of the end (a record's mark and length take 16 bytes), so that the pair crosses
  // the wrap.
  const std::vector<char> filler = pattern(ShmRing::kBytes - 128 - 16);
  ASSERT_TRUE(writer.write_both(filler.data(), filler.size(), nullptr, 0));
  // 128 bytes free: neither piece goes in, though the header alone would fit.
  EXPECT_FALSE(writer.write_both(header.data(), header.size(), body.data(), body.size()));
  std::vector<char> out(filler.size());
  ASSERT_EQ(reader.read(out.data(), out.size()), out.size());
  EXPECT_TRUE(reader.empty());
  std::size_t length = 0;
  EXPECT_EQ(reader.peek(length), nullptr);
  EXPECT_TRUE(writer.write_both(header.data(), header.size(), body.data(), body.size()));
  EXPECT_EQ(reader.peek(length), nullptr);  // it wraps: not in one piece
  out.assign(header.size() + body.size() + 1, 0);
  ASSERT_EQ(reader.read(out.data(), out.size()), header.size() + body.size());
  EXPECT_TRUE(std::equal(header.begin(), header.end(), out.begin()));
  EXPECT_TRUE(std::equal(body.begin(), body.end(), out.begin() + 32));
  EXPECT_TRUE(writer.write_both(header.data(), header.size(), nullptr, 0));  // an empty message
  EXPECT_EQ(reader.read(out.data(), out.size()), header.size());
}

TEST(ShmRing, NoByteOfAnEarlierLapReadsAsARecord) {
  ShmRing writer = ShmRing::create();
  ShmRing reader = ShmRing::open(writer.name());
  using Word = std::uint64_t;
  constexpr std::size_t kLine = 64;
  // One line's record at 0, then one record to the ring's end whose bytes put, at the start of
  // each of its lines, the mark the next lap looks for there (its position + 1) and a length.
  const char one = 'a';
  ASSERT_EQ(writer.write(&one, 1), 1u);
  std::vector<char> body(ShmRing::kBytes - kLine - 16);
  for (std::size_t line = 2 * kLine; line < ShmRing::kBytes; line += kLine) {
    const Word mark_and_length[2] = {ShmRing::kBytes + line + 1, 1};
    std::memcpy(body.data() + (line - kLine - 16), mark_and_length, sizeof mark_and_length);
  }
  ASSERT_TRUE(writer.write_both(body.data(), body.size(), nullptr, 0));
  std::vector<char> out(1 + body.size());
  ASSERT_EQ(reader.read(out.data(), out.size()), out.size());
  EXPECT_TRUE(std::equal(body.begin(), body.end(), out.begin() + 1));
  // The next lap: a line, then the reader looks where the big record's second line was.
  ASSERT_EQ(writer.write(&one, 1), 1u);
  ASSERT_EQ(writer.write(&one, 1), 1u);
  char got[4] = {};
  EXPECT_EQ(reader.read(got, sizeof got), 2u);  // the two records, and nothing after them
  EXPECT_TRUE(reader.empty());
  std::size_t length = 0;
  EXPECT_EQ(reader.peek(length), nullptr);
}

TEST(ShmRing, ARecordPeekedWholeIsTheBytesWrittenAndSkippingGivesItBack) {
  ShmRing writer = ShmRing::create();
  ShmRing reader = ShmRing::open(writer.name());
  const std::vector<char> header = pattern(32);
  const std::vector<char> body = pattern(8);
  for (int i = 0; i < 3000; ++i) {  // laps around the ring, one line each
    ASSERT_TRUE(writer.write_both(header.data(), header.size(), body.data(), body.size())) << i;
    std::size_t length = 0;
    const char* record = reader.peek(length);
    ASSERT_NE(record, nullptr) << i;
    ASSERT_EQ(length, 40u);
    EXPECT_TRUE(std::equal(header.begin(), header.end(), record));
    EXPECT_TRUE(std::equal(body.begin(), body.end(), record + 32));
    reader.skip(length);
    EXPECT_TRUE(reader.empty());
  }
}

TEST(ShmRing, TheNameIsGoneOnceTheReaderHasIt) {
  ShmRing writer = ShmRing::create();
  const std::filesystem::path file = "/dev/shm" + writer.name();
  EXPECT_TRUE(std::filesystem::exists(file)) << file;
  ShmRing reader = ShmRing::open(writer.name());
  EXPECT_FALSE(std::filesystem::exists(file)) << file;
  const char byte = 'x';
  EXPECT_EQ(writer.write(&byte, 1), 1u);  // still shared after the name is gone
  char out = 0;
  EXPECT_EQ(reader.read(&out, 1), 1u);
  EXPECT_EQ(out, 'x');
}

TEST(ShmRing, ASleepingSideIsOwedOneWakeUp) {
  ShmRing writer = ShmRing::create();
  ShmRing reader = ShmRing::open(writer.name());
  EXPECT_FALSE(writer.take_reader_waiting());
  reader.reader_waits(true);
  EXPECT_TRUE(writer.take_reader_waiting());
  EXPECT_FALSE(writer.take_reader_waiting());  // taken down: one wake-up, not one per write
  writer.writer_waits(true);
  EXPECT_TRUE(reader.take_writer_waiting());
  EXPECT_FALSE(reader.take_writer_waiting());
  reader.reader_waits(true);
  reader.reader_waits(false);  // watching again: nothing owed
  EXPECT_FALSE(writer.take_reader_waiting());
}

// A sleeper owes the ring a second look after each raising of its flag (the header's protocol):
// raise() says when it went up, not when it was up already.
TEST(ShmRing, RaisingAFlagSaysWhetherItWasDown) {
  ShmRing writer = ShmRing::create();
  ShmRing reader = ShmRing::open(writer.name());
  EXPECT_TRUE(reader.reader_waits(true));
  EXPECT_FALSE(reader.reader_waits(true));  // up already
  EXPECT_TRUE(writer.take_reader_waiting());
  EXPECT_TRUE(reader.reader_waits(true));  // the writer took it down
  EXPECT_FALSE(reader.reader_waits(false));
  EXPECT_TRUE(writer.writer_waits(true));
  EXPECT_FALSE(writer.writer_waits(true));
  EXPECT_TRUE(reader.take_writer_waiting());
  EXPECT_FALSE(writer.writer_waits(false));
}

// The sleeper's second look comes kRecheckAfter after its flag went up, never before it: a poll of
// whole milliseconds rounds up; once the look is behind it, none is owed.
TEST(ShmRing, TheLookOwedAfterRaisingAFlagIsDueAMillisecondLaterNeverBefore) {
  using std::chrono::microseconds;
  const auto raised = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  EXPECT_EQ(ShmRing::kRecheckAfter, std::chrono::milliseconds(1));
  EXPECT_EQ(ShmRing::recheck_sleep_ms(raised, raised), 1);
  EXPECT_EQ(ShmRing::recheck_sleep_ms(raised, raised + microseconds(300)), 1);  // 0.7 ms: 1
  EXPECT_EQ(ShmRing::recheck_sleep_ms(raised, raised + microseconds(999)), 1);
  EXPECT_EQ(ShmRing::recheck_sleep_ms(raised, raised + microseconds(1000)), -1);
  EXPECT_EQ(ShmRing::recheck_sleep_ms(raised, raised + microseconds(5000)), -1);
  // Never raised (the clock's epoch): nothing owed.
  EXPECT_EQ(ShmRing::recheck_sleep_ms({}, std::chrono::steady_clock::now()), -1);
  // Raised "after" now (a clock read before the raising): the whole wait and a bit, rounded up.
  EXPECT_EQ(ShmRing::recheck_sleep_ms(raised + microseconds(200), raised), 2);
}

}  // namespace
