// The live status page (records/live_status.hpp): what the rank writes in a forked child is what
// its logger reads, and a variable that does not name a page the logger made is ignored.
#include "records/live_status.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

// DTRAIN_LIVE_FD as libdtrain's Settings read it (Settings::live_fd).
std::optional<std::string> live_fd_variable() {
  const char* text = std::getenv(dtrain::records::kLiveFdVariable);
  return text ? std::optional<std::string>(text) : std::nullopt;
}

using dtrain::records::LivePage;

TEST(LiveStatus, WhatTheRankWritesInAnotherProcessItsLoggerReads) {
  const auto page = LivePage::create();
  ASSERT_TRUE(page);
  ASSERT_EQ(page->read().size(), std::size_t{dtrain::records::LiveStatus::kSlots});
  EXPECT_FALSE(page->read()[0].inside());
  EXPECT_EQ(page->read()[0].entered, 0u);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    page->hand_to_child();
    const auto mine = LivePage::from_environment(live_fd_variable());
    if (!mine || std::getenv(dtrain::records::kLiveFdVariable) != nullptr) ::_exit(2);
    // A second Context of the process (the torch backend's beside dtrain.init()'s): slot 1.
    const auto second = LivePage::from_environment(live_fd_variable());
    if (!second) ::_exit(3);
    mine->enter(0, "barrier", 0);
    mine->leave(0);
    mine->enter(1, "allreduce", 4096);  // and stays inside, as a stopped rank would
    second->enter(6, "broadcast", 8);
    second->leave(6);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const auto slots = page->read();
  const auto& s = slots[0];
  EXPECT_TRUE(s.inside());
  EXPECT_EQ(s.entered, 2u);  // inside #1
  EXPECT_EQ(s.left, 1u);
  EXPECT_EQ(s.op, "allreduce");
  EXPECT_EQ(s.bytes, 4096u);
  EXPECT_GT(s.entered_at_us, 0);
  EXPECT_GE(s.entered_at_us, s.left_at_us);
  EXPECT_FALSE(slots[1].inside());
  EXPECT_EQ(slots[1].left, 7u);
  EXPECT_EQ(slots[1].op, "broadcast");
  EXPECT_EQ(slots[2].entered, 0u);
}

TEST(LiveStatus, AVariableThatNamesNoPageIsIgnored) {
  for (const char* text : {"", "x", "-1", "99999999", "12abc"}) {
    ::setenv(dtrain::records::kLiveFdVariable, text, 1);
    EXPECT_FALSE(LivePage::from_environment(live_fd_variable())) << text;
  }
  // An open descriptor that is not a page: /dev/null, and a regular file of another size.
  const int null = ::open("/dev/null", O_RDWR);
  ASSERT_GE(null, 0);
  ::setenv(dtrain::records::kLiveFdVariable, std::to_string(null).c_str(), 1);
  EXPECT_FALSE(LivePage::from_environment(live_fd_variable()));
  ::close(null);
  ::unsetenv(dtrain::records::kLiveFdVariable);
  EXPECT_FALSE(LivePage::from_environment(live_fd_variable()));
}

}  // namespace

// Each collective's wait goes into windows of 200 (the straggler watch's evidence): the window
// being filled, the last whole one, and each level's (window k kept at every level 2^m divides).
TEST(LiveStatus, EachCollectivesWaitIsKeptInWindowsByItsNumber) {
  using dtrain::records::kArrivalWindowCalls;
  const auto page = LivePage::create();
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->read_arrivals(0).empty());
  const std::size_t calls = 4 * kArrivalWindowCalls + 50;
  for (std::uint64_t seq = 0; seq < calls; ++seq) {
    page->enter(seq, "allreduce", 8);
    if (seq == 3 * kArrivalWindowCalls + 7) ::usleep(20000);  // one long wait, in window 3
    page->leave(seq);
  }
  const auto windows = page->read_arrivals(0);
  // The current window 4 (50 collectives), window 3 at level 0, 2 at level 1, 0 at levels 2-13
  // (window 4 is no whole window yet).
  ASSERT_EQ(windows.size(), 4u);
  EXPECT_EQ(windows[0].index, 4u);
  EXPECT_EQ(windows[0].waits_us.size(), 50u);
  EXPECT_EQ(windows[1].index, 3u);
  EXPECT_EQ(windows[2].index, 2u);
  EXPECT_EQ(windows[3].index, 0u);
  for (const auto& w : windows) EXPECT_LE(w.first_enter_us, w.last_leave_us);
  ASSERT_EQ(windows[1].waits_us.size(), kArrivalWindowCalls);
  EXPECT_GE(windows[1].waits_us[7], 20000u);
  EXPECT_LT(windows[1].waits_us[8], 20000u);
  EXPECT_LT(windows[2].waits_us[7], 20000u);
  EXPECT_TRUE(page->read_arrivals(1).empty()) << "another Context's slot";
  EXPECT_TRUE(page->read_arrivals(99).empty());
}
