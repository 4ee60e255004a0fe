// MPI's matching rule, without sockets: the earliest posted receive that takes a message, and
// the earliest unclaimed message that a receive takes; any source, never any tag.
#include "comm/point_to_point/message_matching.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <memory>

namespace {

using dtrain::runtime::Envelope;
using dtrain::runtime::first_message_for;
using dtrain::runtime::first_receive_for;
using dtrain::runtime::kAnySource;
using dtrain::runtime::takes;

struct Entry {
  Envelope e;
  Envelope envelope() const { return e; }
};

std::deque<std::shared_ptr<Entry>> queue(std::initializer_list<Envelope> envelopes) {
  std::deque<std::shared_ptr<Entry>> q;
  for (const Envelope& e : envelopes) q.push_back(std::make_shared<Entry>(Entry{e}));
  return q;
}

TEST(MessageMatching, AReceiveTakesItsSourceOrAnyButOnlyItsTag) {
  EXPECT_TRUE(takes({2, 5}, {2, 5}));
  EXPECT_TRUE(takes({kAnySource, 5}, {3, 5}));
  EXPECT_FALSE(takes({2, 5}, {3, 5}));
  EXPECT_FALSE(takes({kAnySource, 5}, {3, 6}));
}

TEST(MessageMatching, TheEarliestPostedReceiveThatTakesAMessageGetsIt) {
  const auto posted = queue({{1, 0}, {kAnySource, 7}, {2, 7}, {2, 7}});
  EXPECT_EQ(first_receive_for(posted, {2, 7}), 1u);  // the any-source one was posted first
  EXPECT_EQ(first_receive_for(posted, {1, 0}), 0u);
  EXPECT_EQ(first_receive_for(posted, {1, 8}), std::nullopt);
}

TEST(MessageMatching, AReceiveTakesTheEarliestMessageThatArrivedForIt) {
  const auto arrived = queue({{3, 1}, {2, 7}, {1, 7}, {2, 7}});
  EXPECT_EQ(first_message_for(arrived, {2, 7}), 1u);
  EXPECT_EQ(first_message_for(arrived, {kAnySource, 7}), 1u);
  EXPECT_EQ(first_message_for(arrived, {1, 7}), 2u);
  EXPECT_EQ(first_message_for(arrived, {4, 7}), std::nullopt);
}

}  // namespace
