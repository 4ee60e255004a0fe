// The point-to-point wire format: what one end writes the other reads back, and a hello of
// another communicator, another listener (or of no rank) is refused.
#include "comm/point_to_point/wire_format.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace {

namespace wire = dtrain::runtime::wire;

TEST(WireFormat, HeadersReadBackWhatWasWritten) {
  std::array<char, wire::kHeaderBytes> buf{};
  wire::write_header(buf.data(), {-7, 1ull << 40, {5, 0x0201}});
  const wire::Header h = wire::read_header(buf.data());
  EXPECT_EQ(h.tag, -7);
  EXPECT_EQ(h.bytes, 1ull << 40);
  EXPECT_EQ(h.call.count, 5u);  // the collective's call header travels whole
  EXPECT_EQ(h.call.what, 0x0201u);
}

TEST(WireFormat, AHelloNamesItsRankOnlyToACommunicatorOfItsSizeAndTheListenerOfItsKey) {
  constexpr std::uint64_t kKey = 0x0123456789abcdefULL;
  std::array<char, wire::kHelloBytes> hello{};
  wire::write_hello(hello.data(), 3, 8, kKey);
  EXPECT_EQ(wire::read_hello(hello.data(), 8, kKey), 3);
  EXPECT_FALSE(wire::hello_has_ring(hello.data()));
  EXPECT_EQ(wire::read_hello(hello.data(), 4, kKey), -1);  // another communicator
  // Another listener's: a process that took over the port of the rank the sender meant.
  EXPECT_EQ(wire::read_hello(hello.data(), 8, kKey ^ 1), -1);
  hello[0] = 'X';
  EXPECT_EQ(wire::read_hello(hello.data(), 8, kKey), -1);  // no hello at all
  wire::write_hello(hello.data(), 9, 8, kKey);
  EXPECT_EQ(wire::read_hello(hello.data(), 8, kKey), -1);  // no rank of it
  wire::write_ring_hello(hello.data(), 2, 8, kKey);
  EXPECT_EQ(wire::read_hello(hello.data(), 8, kKey), 2);
  EXPECT_TRUE(wire::hello_has_ring(hello.data()));
  EXPECT_EQ(wire::read_hello(hello.data(), 8, ~kKey), -1);
}

TEST(WireFormat, ASizeMismatchSaysBothSizes) {
  EXPECT_EQ(wire::size_mismatch("dtrain: recv from rank 0 (tag 0, 8 bytes; rank 1 of 2)", 16,
                                "rank 0 (on n0)"),
            "dtrain: recv from rank 0 (tag 0, 8 bytes; rank 1 of 2): rank 0 (on n0) sent 16 bytes; "
            "expected a message of the receive's size: send and receive the same count and type");
}

}  // namespace
