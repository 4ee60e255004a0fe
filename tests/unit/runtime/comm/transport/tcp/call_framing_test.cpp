// The TCP backend's messages as they travel (comm/transport/tcp/call_framing.hpp): the call header
// in front of the bytes, and the broadcast tree whose peers the communicator walks.
#include "comm/transport/tcp/call_framing.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace dtrain::runtime {
namespace {

// The broadcast tree: every rank but the root has one parent, and every rank is reached exactly
// once, from any root, in log2(p) rounds at most.
TEST(CallFraming, TheBroadcastTreeReachesEveryRankOnce) {
  for (int size : {1, 2, 5, 8, 13}) {
    for (int root = 0; root < size; ++root) {
      std::vector<int> parents(static_cast<std::size_t>(size), -1);
      for (int r = 0; r < size; ++r) {
        const std::vector<int> tree = broadcast_tree(r, root, size);
        const std::size_t first_child = r == root ? 0 : 1;
        if (r != root) {
          ASSERT_FALSE(tree.empty()) << r;
        }
        for (std::size_t c = first_child; c < tree.size(); ++c) {
          const int child = tree[c];
          ASSERT_EQ(parents[static_cast<std::size_t>(child)], -1) << "reached twice: " << child;
          parents[static_cast<std::size_t>(child)] = r;
          EXPECT_EQ(broadcast_tree(child, root, size).front(), r) << "child's parent";
        }
      }
      int rounds = 0;  // ceil(log2(size))
      while ((1 << rounds) < size) ++rounds;
      for (int r = 0; r < size; ++r) {
        EXPECT_EQ(parents[static_cast<std::size_t>(r)] == -1, r == root) << size << " " << r;
        int depth = 0;
        for (int q = r; q >= 0 && q != root && depth <= size;
             q = parents[static_cast<std::size_t>(q)]) {
          ++depth;
        }
        EXPECT_LE(depth, rounds) << "rank " << r << " of " << size << " from root " << root;
      }
    }
  }
}

// A framed message carries the header it was made with, read back as sent.
TEST(CallFraming, TheHeaderTravelsInFrontOfTheBytes) {
  const CallHeader call = CallHeader::of(77, CallWhat{CallWhat::Kind::kAllgather});
  char data[4] = {1, 2, 3, 4};
  const net::Framed out = outgoing(call, data, sizeof data);
  EXPECT_EQ(out.total(), sizeof(CallHeader) + sizeof data);
  EXPECT_EQ(header_of(out), call);
  const net::Framed in = incoming(data, sizeof data);
  EXPECT_EQ(in.header_len, sizeof(CallHeader));
  EXPECT_FALSE(in.header_done());
}

}  // namespace
}  // namespace dtrain::runtime
