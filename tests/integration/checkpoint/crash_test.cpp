// Crash safety of dtrain::Checkpointer: a saving process is SIGKILLed at every point of a save
// (before the write, after each piece written, after the fsync, after the rename, after the
// directory sync, after the pointer is written, after it is renamed, after pruning), cycle after
// cycle, and after every kill a fresh process's load_latest() must return a complete checkpoint:
// exactly the previous one when the kill came before the rename, exactly the new one after.
//
// The kill is deterministic: crash_helper stops itself (SIGSTOP) at the stage named by
// DTRAIN_TEST_STOP_AT, this test sees it stopped (waitpid WUNTRACED) and sends SIGKILL, so no
// timing decides where the process dies.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#ifndef CRASH_HELPER
#error "CRASH_HELPER must name the crash_helper program"
#endif

namespace {

namespace fs = std::filesystem;

struct Point {
  std::string stop_at;
  bool new_one_survives;  // SIGKILL here: load_latest() returns the new step (else the previous)
};

std::vector<Point> kill_points() {
  std::vector<Point> out = {{"before-write", false}};
  // 16 pieces of data, then the per-rank table.
  for (int piece = 1; piece <= 17; ++piece)
    out.push_back({"writing:" + std::to_string(piece), false});
  for (const char* s : {"written"}) out.push_back({s, false});
  for (const char* s : {"renamed", "dir-synced", "pointer-written", "pointer-updated", "pruned"}) {
    out.push_back({s, true});
  }
  return out;
}

// Runs crash_helper with `args`; with `stop_at`, waits for it to stop there and SIGKILLs it.
// Returns its stdout; *killed says whether it died by our SIGKILL.
std::string run_helper(const std::vector<std::string>& args, const std::string& stop_at,
                       bool* killed, int* exit_status) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    if (stop_at.empty()) {
      unsetenv("DTRAIN_TEST_STOP_AT");
    } else {
      setenv("DTRAIN_TEST_STOP_AT", stop_at.c_str(), 1);
    }
    std::vector<char*> argv = {const_cast<char*>(CRASH_HELPER)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  int status = 0;
  waitpid(pid, &status, WUNTRACED);
  *killed = false;
  if (WIFSTOPPED(status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    *killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }
  *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::string text;
  std::array<char, 256> buf;
  ssize_t n;
  while ((n = read(out[0], buf.data(), buf.size())) > 0)
    text.append(buf.data(), static_cast<std::size_t>(n));
  close(out[0]);
  return text;
}

TEST(CheckpointCrash, KillAtEveryStageNeverLeavesATornCheckpoint) {
  for (const char* v : {"PMIX_NAMESPACE", "PMIX_RANK", "DTRAIN_BOOTSTRAP"}) unsetenv(v);
  char tmpl[] = "/tmp/dtrain-crash-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = fs::path(tmpl) / "ckpt";

  const auto points = kill_points();
  constexpr int kCycles = 9;
  int kills = 0;
  std::int64_t latest = -1;  // the step load_latest() must return; -1: none yet
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    for (const auto& p : points) {
      const std::int64_t step = latest + 1;
      bool killed = false;
      int status = 0;
      run_helper({"save", dir.string(), std::to_string(step)}, p.stop_at, &killed, &status);
      ASSERT_TRUE(killed) << "the save of step " << step << " never reached " << p.stop_at
                          << " (exit status " << status << ")";
      ++kills;
      if (p.new_one_survives) latest = step;
      const std::string loaded = run_helper({"load", dir.string()}, "", &killed, &status);
      ASSERT_EQ(status, 0) << "load_latest() failed after a kill at " << p.stop_at << " of step "
                           << step << ": " << loaded;
      const std::string expected = latest < 0 ? "none\n" : "step " + std::to_string(latest) + "\n";
      ASSERT_EQ(loaded, expected) << "after a kill at " << p.stop_at << " of step " << step;
    }
    // One save that completes: the cycle ends with a clean checkpoint, and stale .tmp files of the
    // killed saves are gone.
    bool killed = false;
    int status = 0;
    const std::int64_t step = latest + 1;
    EXPECT_EQ(run_helper({"save", dir.string(), std::to_string(step)}, "", &killed, &status),
              "saved " + std::to_string(step) + "\n");
    latest = step;
    for (const auto& e : fs::directory_iterator(dir)) {
      EXPECT_EQ(e.path().extension(), "") << "left behind: " << e.path();
    }
  }
  EXPECT_GE(kills, 200);
  std::printf("SIGKILLed %d saves at %zu points each cycle; every load_latest() was complete\n",
              kills, points.size());
  fs::remove_all(tmpl);
}

}  // namespace
