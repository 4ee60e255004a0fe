// The point-to-point wire format: what one end writes the other reads back, and a hello of
// another communicator (or of no rank) is refused.
#include "comm/point_to_point/wire_format.hpp"

#include <gtest/gtest.h>

#include <array>
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

TEST(WireFormat, AHelloNamesItsRankOnlyToACommunicatorOfItsSize) {
  std::array<char, wire::kHelloBytes> hello{};
  wire::write_hello(hello.data(), 3, 8);
  EXPECT_EQ(wire::read_hello(hello.data(), 8), 3);
  EXPECT_EQ(wire::read_hello(hello.data(), 4), -1);  // another communicator
  hello[0] = 'X';
  EXPECT_EQ(wire::read_hello(hello.data(), 8), -1);  // no hello at all
  wire::write_hello(hello.data(), 9, 8);
  EXPECT_EQ(wire::read_hello(hello.data(), 8), -1);  // no rank of it
}

TEST(WireFormat, ASizeMismatchSaysBothSizes) {
  EXPECT_EQ(wire::size_mismatch("dtrain: recv from rank 0 (tag 0, 8 bytes; rank 1 of 2)", 16,
                                "rank 0 (on n0)"),
            "dtrain: recv from rank 0 (tag 0, 8 bytes; rank 1 of 2): rank 0 (on n0) sent 16 bytes; "
            "expected a message of the receive's size: send and receive the same count and type");
}

}  // namespace
