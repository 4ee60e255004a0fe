// The mailbox's address records (the MPI backend's): a record reads back as the host, port and
// key it was made with, and one that is not a record is named.
#include "comm/point_to_point/mailbox_records.hpp"

#include <gtest/gtest.h>

#include <string>

#include "net/random_token.hpp"

namespace {

using dtrain::runtime::kMailboxRecordBytes;

TEST(MailboxRecords, EachRankReadsEveryRanksHostPortAndKey) {
  auto a = dtrain::runtime::listen_for_messages("node-a");
  auto b = dtrain::runtime::listen_for_messages("node-b");
  ASSERT_EQ(a.record.size(), kMailboxRecordBytes);
  const auto all = dtrain::runtime::read_mailbox_records((a.record + b.record).data(), 2);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].host, "node-a");
  EXPECT_EQ(all[0].node, "node-a");
  EXPECT_EQ(all[0].port, dtrain::runtime::net::local_port(a.socket));
  EXPECT_EQ(all[1].host, "node-b");
  EXPECT_EQ(all[1].port, dtrain::runtime::net::local_port(b.socket));
  // Each listener its own key, drawn at random, and written as its text.
  EXPECT_NE(all[0].key, all[1].key);
  EXPECT_NE(a.record.find(dtrain::runtime::net::token_text(all[0].key)), std::string::npos);
}

TEST(MailboxRecords, ARecordThatIsNotOneIsNamed) {
  std::string bad = "node-a 4000";  // a record of a build before the key
  bad.resize(kMailboxRecordBytes, '\0');
  try {
    dtrain::runtime::read_mailbox_records(bad.data(), 1);
    FAIL() << "read";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: point-to-point: rank 0's address record is not \"host port key\": \"node-a "
              "4000\"");
  }
}

TEST(MailboxRecords, AHostNameTooLongForARecordIsRefused) {
  // The longest a record holds (263) reads back whole, port and key beside it: DNS's longest
  // name (253) fits with room to spare.
  const std::string longest(263, 'h');
  auto l = dtrain::runtime::listen_for_messages(longest);
  ASSERT_EQ(l.record.size(), kMailboxRecordBytes);
  const auto all = dtrain::runtime::read_mailbox_records(l.record.data(), 1);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].host, longest);
  EXPECT_EQ(all[0].port, dtrain::runtime::net::local_port(l.socket));
  try {
    dtrain::runtime::listen_for_messages(std::string(264, 'h'));
    FAIL() << "listened";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()), "dtrain: point-to-point: host name \"" +
                                         std::string(264, 'h') +
                                         "\"; expected 1 to 263 characters without spaces");
  }
}

}  // namespace
