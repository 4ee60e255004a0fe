// --first-error where a rank log cannot be read (report/unreadable_logs.hpp): the file is named
// with why, and no victim takes the unread rank's place.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rank_logs.hpp"
#include "report/first_error.hpp"
#include "report/unreadable_logs.hpp"

namespace dtrain::report {
namespace {

using testing::at;
using testing::exit_line;
using testing::kT0;
using testing::scan;
using testing::start;

// Issue 45 item 6: rank 1's log cannot be read (a FIFO, a directory, a dangling link, /dev/zero):
// it was left out without a word and the first victim, rank 0, was named the culprit. The report
// names the file and why, and blames nobody when the readable ranks only report a lost peer.
TEST(FirstError, AnUnreadableLogIsNamedAndItsRankIsNotReplacedByAVictim) {
  const std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0)), at(6, "dtrain: allreduce: tcp: missing ranks: 1; rank 1 closed"),
               at(6.1, exit_line(0, 1))}),
      scan(2, {at(0, start(2)), at(6, "dtrain: allreduce: tcp: missing ranks: 1; rank 1 closed"),
               at(6.2, exit_line(2, 1))}),
  };
  FirstErrorReport r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);  // what the old report said: a victim
  EXPECT_EQ(r.culprit->rank, 0);
  add_unreadable_logs(r, {{1, "runs/a/rank-00001.log", "a FIFO (named pipe)"}});
  EXPECT_FALSE(r.culprit);
  EXPECT_TRUE(r.culprit_unknown);
  ASSERT_EQ(r.victims.size(), 2u);
  const std::string text = format_first_error(r);
  EXPECT_EQ(text.rfind("first failure: unknown: the log of rank 1 could not be read, and every "
                       "failing rank whose log was read reports a lost peer or timeout\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("1 rank log was skipped: it could not be read (expected a regular file)\n"
                      "  runs/a/rank-00001.log (rank 1): a FIFO (named pipe)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(summarize_first_error(r),
            "culprit unknown: the log of rank 1 could not be read (a FIFO (named pipe)), and the "
            "ranks whose logs were read report a lost peer or timeout");
  const nlohmann::json j = first_error_to_json(r);
  EXPECT_TRUE(j["culprit"].is_null());
  EXPECT_EQ(j["unreadable"][0]["why"], "a FIFO (named pipe)");

  // A rank that failed on its own stays the culprit; the unreadable log is still named.
  const std::vector<RankLogScan> own = {
      scan(0, {at(0, start(0)), at(3, "ValueError: boom"), at(3.1, exit_line(0, 1))}),
      scan(2, {at(0, start(2)), at(9, exit_line(2, 0))}),
  };
  FirstErrorReport o = find_first_error(own, {}, std::nullopt);
  add_unreadable_logs(o, {{1, "runs/a/rank-00001.log", "a directory"}});
  ASSERT_TRUE(o.culprit);
  EXPECT_EQ(o.culprit->rank, 0);
  EXPECT_NE(format_first_error(o).find("1 rank log was skipped: it could not be read (expected a "
                                       "regular file); the culprit is named from the others\n"
                                       "  runs/a/rank-00001.log (rank 1): a directory\n"),
            std::string::npos)
      << format_first_error(o);
}

}  // namespace
}  // namespace dtrain::report
