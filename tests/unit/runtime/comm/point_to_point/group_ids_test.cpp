// A Context's group ids: agreed ones count up from 1 past every id agreed, numbered ones sit above
// them at 2^30 + number, and neither range can reach the other or the agreement's own id.
#include "comm/point_to_point/group_ids.hpp"

#include <gtest/gtest.h>

#include <string>

#include "error_text.hpp"

namespace {

using dtrain::runtime::GroupIds;
using dtrain::test::error_of;

TEST(GroupIds, AgreedIdsProposeOnePastTheLargestAgreed) {
  GroupIds ids;
  EXPECT_EQ(ids.next(), 1);
  ids.agreed(1, "split");
  EXPECT_EQ(ids.next(), 2);
  ids.agreed(9, "split");  // another member proposed more: this one skips to it
  EXPECT_EQ(ids.next(), 10);
  ids.agreed(4, "subgroup");  // a smaller one (another Context's count) changes nothing
  EXPECT_EQ(ids.next(), 10);
}

TEST(GroupIds, NumberedIdsSitAboveTheAgreedAndTakeNoneOfThem) {
  GroupIds ids;
  EXPECT_EQ(ids.numbered(0, "subgroup"), std::int64_t{1} << 30);
  EXPECT_EQ(ids.numbered(GroupIds::kMaxNumber, "subgroup"), (std::int64_t{1} << 31) - 2)
      << "below the agreement's id, 2^31 - 1";
  EXPECT_EQ(ids.next(), 1);
  EXPECT_EQ(ids.numbered(5, "subgroup"), (std::int64_t{1} << 30) + 5);
}

TEST(GroupIds, ARepeatedNumberAnOutOfRangeOneAndTooManyAgreedAreRefusedByName) {
  GroupIds ids;
  (void)ids.numbered(3, "subgroup");
  EXPECT_EQ(error_of([&] { (void)ids.numbered(3, "subgroup"); }),
            "dtrain: subgroup: number 3 was given to an earlier group of this Context; expected "
            "a number given to no other group (the same on every member, as torch's new_group "
            "count is)");
  EXPECT_EQ(error_of([&] { GroupIds::check_number(-2, "subgroup"); }),
            "dtrain: subgroup: number; expected 0 to 1073741822, got -2");
  EXPECT_EQ(error_of([&] { ids.agreed(std::int64_t{1} << 30, "split"); }),
            "dtrain: split: this Context has made 1073741823 groups by split or subgroup, the "
            "most it can; expected fewer (a group given a number takes none of them)");
  EXPECT_EQ(ids.next(), 1);
}

}  // namespace
