#include "report/stack_tree.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace dtrain::report {
namespace {

// gdb 13's `thread apply all bt` of runtime_probe waiting in an allreduce (two threads), as
// Debian's gdb printed it (addresses and arguments kept: the parser must see past them).
constexpr std::string_view kWaitingRank =
    R"(0x00007f0e1c0f1b7f in __GI___poll (fds=0x55d0, nfds=2, timeout=100) at ../sysdeps/unix/sysv/linux/poll.c:29
29	../sysdeps/unix/sysv/linux/poll.c: No such file or directory.

Thread 2 (Thread 0x7f0e1b9ff6c0 (LWP 4242) "runtime_probe"):
#0  0x00007f0e1c0c1f16 in __futex_abstimed_wait_common64 (private=0, cancel=true, abstime=0x7f0e1b9fed90, op=393, expected=0, futex_word=0x55d0) at ./nptl/futex-internal.c:57
#1  0x00007f0e1c0c4a41 in __pthread_cond_wait_common (abstime=0x7f0e1b9fed90, clockid=0, mutex=0x55d0, cond=0x55d0) at ./nptl/pthread_cond_wait.c:503
#2  ___pthread_cond_clockwait64 (cond=0x55d0, mutex=0x55d0, clockid=0, abstime=0x7f0e1b9fed90) at ./nptl/pthread_cond_wait.c:691
#3  0x000055d0a1b2c3d4 in std::condition_variable::wait_until<std::chrono::_V2::steady_clock, long, std::ratio<1l, 1000000000l> > (this=0x55d0, __lock=..., __atime=...) at /usr/include/c++/12/condition_variable:199
#4  0x00007f0e1c0c01c3 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#5  0x00007f0e1c13f85c in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 1 (Thread 0x7f0e1bd3e740 (LWP 4241) "runtime_probe"):
#0  0x00007f0e1c0f1b7f in __GI___poll (fds=0x55d0, nfds=2, timeout=100) at ../sysdeps/unix/sysv/linux/poll.c:29
#1  0x00007f0e1c3a1234 in dtrain::TcpCommunicator::wait_readable (this=0x55d0) at /work/runtime/comm/tcp_communicator.cpp:210
#2  0x00007f0e1c3a2345 in dtrain::RecursiveDoubling::allreduce (this=0x55d0, data=..., op=dtrain::ReduceOp::kSum) at /work/runtime/comm/recursive_doubling.cpp:88
#3  0x00007f0e1c3a3456 in dtrain::Comm::allreduce<float> (this=0x55d0, data=..., op=dtrain::ReduceOp::kSum) at /work/runtime/include/dtrain/comm.hpp:120
#4  0x000055d0a1b2a111 in main (argc=1, argv=0x7ffd) at /work/tests/integration/runtime/runtime_probe.cpp:402
)";

// The odd rank, spinning in main outside any collective.
constexpr std::string_view kSpinningRank = R"(
Thread 2 (Thread 0x7f0e1b9ff6c0 (LWP 4252) "runtime_probe"):
#0  0x00007f0e1c0c1f16 in __futex_abstimed_wait_common64 (private=0, cancel=true, abstime=0x7f0e1b9fed90, op=393, expected=0, futex_word=0x55d0) at ./nptl/futex-internal.c:57
#1  0x00007f0e1c0c4a41 in __pthread_cond_wait_common (abstime=0x7f0e1b9fed90, clockid=0, mutex=0x55d0, cond=0x55d0) at ./nptl/pthread_cond_wait.c:503
#2  ___pthread_cond_clockwait64 (cond=0x55d0, mutex=0x55d0, clockid=0, abstime=0x7f0e1b9fed90) at ./nptl/pthread_cond_wait.c:691
#3  0x000055d0a1b2c3d4 in std::condition_variable::wait_until<std::chrono::_V2::steady_clock, long, std::ratio<1l, 1000000000l> > (this=0x55d0, __lock=..., __atime=...) at /usr/include/c++/12/condition_variable:199
#4  0x00007f0e1c0c01c3 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#5  0x00007f0e1c13f85c in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 1 (Thread 0x7f0e1bd3e740 (LWP 4251) "runtime_probe"):
#0  main (argc=1, argv=0x7ffd) at /work/tests/integration/runtime/runtime_probe.cpp:395
)";

RankStacks rank(int r, std::string_view gdb_text) {
  RankStacks s;
  s.rank = r;
  s.host = "node" + std::to_string(r / 4);
  s.threads = parse_gdb_backtrace(gdb_text);
  return s;
}

std::vector<RankStacks> job(int ranks, int odd) {
  std::vector<RankStacks> stacks;
  for (int r = 0; r < ranks; ++r)
    stacks.push_back(rank(r, r == odd ? kSpinningRank : kWaitingRank));
  return stacks;
}

TEST(StackTree, ReadsFunctionNamesOutermostFirstWhateverTheAddressesAndArguments) {
  const auto threads = parse_gdb_backtrace(kWaitingRank);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0],
            (std::vector<std::string>{"clone3", "start_thread",
                                      "std::condition_variable::wait_until<std::chrono::_V2::"
                                      "steady_clock, long, std::ratio<1l, 1000000000l> >",
                                      "___pthread_cond_clockwait64", "__pthread_cond_wait_common",
                                      "__futex_abstimed_wait_common64"}));
  EXPECT_EQ(threads[1],
            (std::vector<std::string>{"main", "dtrain::Comm::allreduce<float>",
                                      "dtrain::RecursiveDoubling::allreduce",
                                      "dtrain::TcpCommunicator::wait_readable", "__GI___poll"}));
}

TEST(StackTree, FramesWithoutDebugInformationOrSymbols) {
  // Minimal symbols: the name carries its parameter types; the empty list after it is gdb's.
  EXPECT_EQ(parse_gdb_frame("#2  0x00005 in foo::bar(int, char const*) () from /lib/libx.so.1"),
            "foo::bar(int, char const*)");
  EXPECT_EQ(parse_gdb_frame("#1  0x0000560b065623f2 in ?? ()"), "??");
  EXPECT_EQ(parse_gdb_frame("#7  0x00007f in ?? () from /lib/x86_64-linux-gnu/libc.so.6"),
            "?? from libc.so.6");
  EXPECT_EQ(parse_gdb_frame("#3  <signal handler called>"), "<signal handler called>");
  EXPECT_EQ(parse_gdb_frame("#4  0x1 in std::function<void (int)>::operator() (this=0x1) at f:1"),
            "std::function<void (int)>::operator()");
  EXPECT_EQ(parse_gdb_frame("#5  0x1 in operator< (a=..., b=...) at f:1"), "operator<");
  EXPECT_EQ(parse_gdb_frame("Thread 1 (Thread 0x7f (LWP 1) \"x\"):"), std::nullopt);
  EXPECT_EQ(parse_gdb_frame("#"), std::nullopt);
}

// The done-when case: 16 ranks wait in an allreduce but rank 11, which spins in main. Its branch
// stands apart with its rank, under the frame all 16 share; the threads all ranks share are one
// branch.
TEST(StackTree, SixteenRanksTheOddOneApart) {
  EXPECT_EQ(format_stack_tree(job(16, 11)),
            "stacks of ranks 0-15, merged (each heading names the ranks with a thread in the "
            "frames below it):\n"
            "  ranks 0-15 (16):\n"
            "    clone3\n"
            "    start_thread\n"
            "    std::condition_variable::wait_until<std::chrono::_V2::steady_clock, long, "
            "std::ratio<1l, 1000000000l> >\n"
            "    ___pthread_cond_clockwait64\n"
            "    __pthread_cond_wait_common\n"
            "    __futex_abstimed_wait_common64\n"
            "  ranks 0-15 (16):\n"
            "    main\n"
            "    ranks 0-10,12-15 (15):\n"
            "      dtrain::Comm::allreduce<float>\n"
            "      dtrain::RecursiveDoubling::allreduce\n"
            "      dtrain::TcpCommunicator::wait_readable\n"
            "      __GI___poll\n"
            "    rank 11:\n"
            "      (in main itself)\n");
}

// A rank that stopped in main has main as its innermost frame: the tree must still say so (a
// frame that ends a thread here and goes on in others is a branch with the ranks that end there).
TEST(StackTree, ARankWhoseThreadEndsWhereOthersGoOnIsNamed) {
  const StackNode root = merge_stacks(job(4, 2));
  ASSERT_EQ(root.children.size(), 2u);
  const StackNode& main = root.children[1];
  EXPECT_EQ(main.frame, "main");
  EXPECT_EQ(main.ranks, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(main.children.size(), 1u);
  EXPECT_EQ(main.children[0].ranks, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(main.ends_here, (std::vector<int>{2}));
}

TEST(StackTree, OneThousandTwentyFourRanksAreAFewLines) {
  const std::string text = format_stack_tree(job(1024, 1000));
  EXPECT_NE(text.find("stacks of ranks 0-1023, merged"), std::string::npos) << text;
  EXPECT_NE(text.find("  ranks 0-1023 (1024):\n    main\n    ranks 0-999,1001-1023 (1023):\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    rank 1000:\n      (in main itself)\n"), std::string::npos) << text;
  // 1 heading, 2 branches of 6 and 1 frames, below main one of 4 and rank 1000's: 17 lines,
  // however many ranks.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 17) << text;
}

// The leaf where a whole thread ends is no branch of its own: every rank there ends there.
TEST(StackTree, AFrameWhereEveryRankEndsIsNoBranch) {
  const std::string text = format_stack_tree(job(2, -1));
  EXPECT_EQ(text.find("itself"), std::string::npos) << text;
}

TEST(StackTree, RanksWithoutAStackAreListedByWhy) {
  auto stacks = job(6, -1);
  stacks[1].threads.clear();
  stacks[1].problem = "ptrace: Operation not permitted.";
  stacks[4].threads.clear();
  stacks[4].problem = "ptrace: Operation not permitted.";
  stacks[5].threads.clear();
  stacks[5].problem = "not taken within 8 s";
  const std::string text = format_stack_tree(stacks);
  EXPECT_NE(text.find("stacks of ranks 0,2-3, merged"), std::string::npos) << text;
  EXPECT_NE(text.find("\nno stack of rank 5: not taken within 8 s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nno stacks of ranks 1,4: ptrace: Operation not permitted.\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(format_stack_tree({}), "");
}

// elfutils' eu-stack -m of a rank of runtime_probe stopped in main (two of its threads).
TEST(StackTree, ReadsEuStack) {
  constexpr std::string_view text = R"(PID 30419 - process
TID 30419:
#0  0x00007fb3770a8eec __pthread_kill_implementation - /usr/lib/x86_64-linux-gnu/libc.so.6
#1  0x00007fb377059fb2 raise - /usr/lib/x86_64-linux-gnu/libc.so.6
#2  0x0000555bc150d25f main - /work/main/build-test/tests/integration/runtime/runtime_probe
#3  0x00007fb37704524a __libc_start_call_main - /usr/lib/x86_64-linux-gnu/libc.so.6
#4  0x00007fb377045305 __libc_start_main@@GLIBC_2.34 - /usr/lib/x86_64-linux-gnu/libc.so.6
#5  0x0000555bc150d741 _start - /work/main/build-test/tests/integration/runtime/runtime_probe
TID 30424:
#0  0x00007fb377126f36 epoll_wait - /usr/lib/x86_64-linux-gnu/libc.so.6
#1  0x00007fb376b39724 - /usr/lib/x86_64-linux-gnu/libevent_core-2.1.so.7.0.1
#2  0x00007fb376b30225 event_base_loop - /usr/lib/x86_64-linux-gnu/libevent_core-2.1.so.7.0.1
#3  0x00007f5bad8bbdd2 dtrain::runtime::ShmAllreduce::one_shot_piece(unsigned long, dtrain::DType, dtrain::ReduceOp) - /work/main/build-test/lib/libdtrain.so.0.1.0
#4  0x00007fb3771278ec __clone3
)";
  EXPECT_EQ(parse_eu_stack(text),
            (std::vector<std::vector<std::string>>{
                {"_start", "__libc_start_main", "__libc_start_call_main", "main", "raise",
                 "__pthread_kill_implementation"},
                {"__clone3",
                 "dtrain::runtime::ShmAllreduce::one_shot_piece(unsigned long, dtrain::DType, "
                 "dtrain::ReduceOp)",
                 "event_base_loop", "?? from libevent_core-2.1.so.7.0.1", "epoll_wait"}}));
  EXPECT_EQ(parse_eu_stack("eu-stack: dwfl_linux_proc_report pid 1: Permission denied\n"),
            (std::vector<std::vector<std::string>>{}));
  EXPECT_EQ(gdb_problem("eu-stack: dwfl_linux_proc_report pid 1: Permission denied\n", "none"),
            "eu-stack: dwfl_linux_proc_report pid 1: Permission denied");
}

TEST(StackTree, ProblemsGdbPrints) {
  EXPECT_EQ(
      gdb_problem("warning: x\nptrace: Operation not permitted.\nThe program is not being run.\n",
                  "gdb printed no frame"),
      "ptrace: Operation not permitted.");
  EXPECT_EQ(gdb_problem("nothing useful\n", "gdb printed no frame"), "gdb printed no frame");
}

TEST(StackTree, SplitsOneGdbRunByProcess) {
  const auto parts = split_by_marker(
      "noise\n@@dtrain-stacks pid 12\nThread 1 (x):\n#0  main () at a.c:1\n"
      "@@dtrain-stacks pid 13\nptrace: No such process.\n@@dtrain-stacks pid x\nlost\n");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parse_gdb_backtrace(parts.at(12)), (std::vector<std::vector<std::string>>{{"main"}}));
  EXPECT_EQ(parts.at(13), "ptrace: No such process.\n");
}

TEST(StackTree, JsonRoundTripAndBadFieldsNamed) {
  RankStacks s = rank(3, kSpinningRank);
  s.pid = 4251;
  s.attempt = 1;
  s.taken_at_us = 1795341600'000000;
  const RankStacks back = rank_stacks_from_json(rank_stacks_to_json(s).dump(), "f.json");
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.host, "node0");
  EXPECT_EQ(back.pid, 4251);
  EXPECT_EQ(back.attempt, 1);
  EXPECT_EQ(back.taken_at_us, s.taken_at_us);
  EXPECT_EQ(back.threads, s.threads);
  EXPECT_EQ(back.problem, "");
  try {
    rank_stacks_from_json(R"({"rank": "three"})", "stacks/rank-000003.json");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "stacks/rank-000003.json: \"rank\": expected a whole number (the stacks the "
                 "hang watch writes)");
  }
  EXPECT_THROW(rank_stacks_from_json("{", "f"), UsageError);
  EXPECT_THROW(rank_stacks_from_json(R"({"rank": 1, "threads": [[1]]})", "f"), UsageError);
}

TEST(StackTree, OnlyTheLatestAttemptsStacks) {
  std::vector<RankStacks> stacks = job(3, -1);
  stacks[0].attempt = 1;
  stacks[2].attempt = 1;
  const auto latest = latest_attempt(stacks);
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].rank, 0);
  EXPECT_EQ(latest[1].rank, 2);
}

}  // namespace
}  // namespace dtrain::report
