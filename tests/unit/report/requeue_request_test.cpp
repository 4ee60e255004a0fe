// The status a job acts on after its launch: the ranks' exit lines say "requeue" (85) even where
// the launcher exited 0 (MPICH's Hydra after an agreed stop) or with a status of its own; any rank
// that failed otherwise keeps the launcher's status.
#include "report/requeue_request.hpp"

#include <gtest/gtest.h>

#include <csignal>

#include "rank_logs.hpp"

namespace dtrain::report {
namespace {

using testing::at;
using testing::exit_line;
using testing::scan;
using testing::start;

RankLogScan ended(int rank, int status, int signal = 0) {
  return scan(rank, {at(0, start(rank)), at(1, "step 40"), at(2, exit_line(rank, status, signal))});
}

RankLogScan silent(int rank) { return scan(rank, {at(0, start(rank)), at(1, "step 40")}); }

TEST(LaunchStatusFromRanks, EveryRankAskedSoALauncherThatSaidZeroIsOverruled) {
  const auto decided =
      launch_status_from_ranks(0, {ended(0, 85), ended(1, 85), ended(2, 85), ended(3, 85)});
  EXPECT_EQ(decided.status, 85);
  EXPECT_EQ(decided.note,
            "the launcher exited with status 0, but every rank exited 85 after saving (a requeue): "
            "the job acts on status 85");
}

TEST(LaunchStatusFromRanks, RanksTheLauncherEndedAfterTheFirstExitCountAsPartOfTheStop) {
  const auto decided = launch_status_from_ranks(
      143, {ended(0, 85), ended(1, 0, SIGTERM), silent(2), ended(3, 85), ended(4, 0, SIGKILL)});
  EXPECT_EQ(decided.status, 85);
  EXPECT_EQ(decided.note,
            "the launcher exited with status 143, but ranks 0,3 exited 85 after saving (a "
            "requeue) and the launcher ended ranks 1-2,4 after: the job acts on status 85");
}

TEST(LaunchStatusFromRanks, ARankThatFailedOtherwiseKeepsTheLaunchersStatus) {
  EXPECT_EQ(launch_status_from_ranks(1, {ended(0, 85), ended(1, 1)}).status, 1);
  EXPECT_EQ(launch_status_from_ranks(0, {ended(0, 85), ended(1, 0)}).status, 0);
  EXPECT_EQ(launch_status_from_ranks(139, {ended(0, 85), ended(1, 0, SIGSEGV)}).status, 139);
  EXPECT_TRUE(launch_status_from_ranks(1, {ended(0, 85), ended(1, 1)}).note.empty());
}

TEST(LaunchStatusFromRanks, NoRankAskedSoNothingChanges) {
  EXPECT_EQ(launch_status_from_ranks(0, {ended(0, 0), ended(1, 0)}).status, 0);
  EXPECT_EQ(launch_status_from_ranks(137, {ended(0, 0, SIGKILL), silent(1)}).status, 137);
  EXPECT_EQ(launch_status_from_ranks(0, {}).status, 0);
}

TEST(LaunchStatusFromRanks, TheLaunchersOwn85NeedsNoNote) {
  const auto decided = launch_status_from_ranks(85, {ended(0, 85), ended(1, 85)});
  EXPECT_EQ(decided.status, 85);
  EXPECT_TRUE(decided.note.empty());
}

}  // namespace
}  // namespace dtrain::report
