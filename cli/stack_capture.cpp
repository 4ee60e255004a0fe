#include "stack_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/errors.hpp"
#include "process.hpp"
#include "python_stacks.hpp"
#include "records/output_tee.hpp"
#include "records/rank_files.hpp"
#include "records/run_dir_layout.hpp"
#include "report/json_text.hpp"
#include "report/python_frames.hpp"
#include "run_dir.hpp"

extern char** environ;

namespace dtrain::cli {
namespace {

namespace fs = std::filesystem;

// The state letter of /proc/PID/stat ('R', 'S', 'T', ...); '?' when it cannot be read.
char process_state(long pid) {
  const std::string stat = read_small_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

// Whether `pid` is still rank `rank` of this run: a pid the kernel gave to another process since
// must not be attached to. Its environment carries the rank run-rank set; one that cannot be read
// (another user's) is taken on trust, and gdb will say what it can.
bool still_the_rank(long pid, int rank) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!in) return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  const std::string want = "DTRAIN_RANK=" + std::to_string(rank);
  std::string var;
  while (std::getline(in, var, '\0')) {
    if (var == want) return true;
  }
  return false;
}

// One debugger run: eu-stack for one process, or gdb for several in turn.
struct Run {
  std::vector<std::string> argv;
  std::vector<std::size_t> targets;  // indices into the targets, in the order it reads them
  pid_t pid = -1;
  int fd = -1;
  std::string out;
  bool started = false;
  bool done = false;
  bool killed = false;  // still running at the deadline
  bool spawn_failed = false;
};

std::vector<std::string> gdb_argv(const std::vector<StackTarget>& all, const Run& run) {
  std::vector<std::string> argv = {"gdb", "-batch", "-nx", "-q",
                                   // Nodes have no network, and nothing may prompt.
                                   "-iex", "set debuginfod enabled off", "-ex",
                                   "set pagination off", "-ex", "set width 0"};
  for (const std::size_t i : run.targets) {
    const std::string pid = std::to_string(all[i].pid);
    // gdb goes on after a command that failed (an attach refused): each process is read alone.
    for (const std::string& cmd :
         {"echo " + std::string(report::kStackMarker) + pid + "\\n", "attach " + pid,
          std::string("thread apply all bt"), std::string("detach")}) {
      argv.push_back("-ex");
      argv.push_back(cmd);
    }
  }
  return argv;
}

void spawn(Run& r) {
  r.started = true;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("dtrain: stacks: pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A group of its own: ended with whatever it started.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const auto& a : r.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawnp(&r.pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    r.pid = -1;
    r.spawn_failed = true;
    r.done = true;
    return;
  }
  r.fd = pipe_fds[0];
}

void reap(Run& r) {
  if (r.fd >= 0) ::close(r.fd);
  r.fd = -1;
  int status = 0;
  while (r.pid > 0 && ::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.done = true;
}

// Runs `runs`, at most `parallel` at once, reading their output, until all are done or the
// deadline: those running then are killed, those not begun stay so.
void run_all(std::vector<Run>& runs, std::size_t parallel,
             std::chrono::steady_clock::time_point deadline) {
  std::size_t next = 0;
  for (;;) {
    std::size_t running = 0;
    for (const auto& r : runs) running += r.started && !r.done ? 1 : 0;
    while (running < parallel && next < runs.size()) {
      spawn(runs[next]);
      running += runs[next++].done ? 0 : 1;
    }
    std::vector<pollfd> fds;
    std::vector<Run*> owners;
    for (auto& r : runs) {
      if (r.started && !r.done) {
        fds.push_back({r.fd, POLLIN, 0});
        owners.push_back(&r);
      }
    }
    if (fds.empty()) return;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) break;
    char buf[16384];
    for (std::size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        owners[i]->out.append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        reap(*owners[i]);
      }
    }
  }
  for (auto& r : runs) {
    if (r.started && !r.done) {
      // Still running at the deadline (a process blocked in the kernel holds ptrace): its group
      // ends now, and the kernel detaches a dead tracer's processes.
      ::kill(-r.pid, SIGKILL);
      r.killed = true;
      reap(r);
    }
  }
}

std::string seconds_text(std::chrono::milliseconds limit) {
  const auto ms = limit.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000)
                        : std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100);
}

}  // namespace

RankProcesses find_rank_processes(const std::string& run_dir) {
  require_run_dir(run_dir);
  const auto logs = list_rank_files(run_dir, records::kLogExtension);
  if (logs.empty()) {
    throw UsageError("dtrain: stacks: " + run_dir + ": no " +
                     records::rank_file_pattern(records::kLogExtension) +
                     " rank logs: has the job started? (each rank's log names its host and pid)");
  }
  RankProcesses out;
  out.host = records::this_host();
  const AttemptScans read = read_attempt_scans(run_dir, logs);
  out.attempt = read.attempt;
  for (const auto& scan : read.scans) {
    const auto& start = scan.start();
    if (!start) continue;
    report::RankStacks s;
    s.rank = scan.rank();
    s.host = start->host;
    s.pid = start->pid;
    s.attempt = start->attempt;
    if (scan.exit()) {
      s.problem = "exited before the stacks were taken";
    } else if (start->host != out.host) {
      s.problem =
          "they run on other nodes; dtrain stacks reads the ranks of the node it runs on (" +
          out.host + "): run it on theirs";
    } else if (start->pid <= 0 || !still_the_rank(start->pid, s.rank)) {
      s.problem = "its process (pid " + std::to_string(start->pid) +
                  " in its log's start line) is gone: its logger ended without an exit line";
    } else {
      out.here.push_back({s.rank, s.host, s.pid, s.attempt});
      continue;
    }
    out.elsewhere.push_back(std::move(s));
  }
  return out;
}

std::vector<report::RankStacks> capture_stacks(const std::vector<StackTarget>& targets,
                                               std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<char> was_stopped;
  for (const auto& t : targets) {
    const char state = process_state(t.pid);
    was_stopped.push_back(state == 'T' || state == 't');
  }
  const std::size_t cores = std::max(2u, std::thread::hardware_concurrency());
  // eu-stack reads a process in a tenth of a second where gdb, loading every library's debug
  // information, takes one to three (16 ranks on 2 busy cores: 2 s against over 20): gdb only
  // where elfutils is not installed.
  const bool eu_stack = !find_on_path("eu-stack").empty();
  const bool gdb = !eu_stack && !find_on_path("gdb").empty();
  std::vector<Run> runs;
  if (eu_stack) {
    for (std::size_t i = 0; i < targets.size(); ++i) {
      Run& r = runs.emplace_back();
      r.argv = {"eu-stack", "-m", "-p", std::to_string(targets[i].pid)};
      r.targets = {i};
    }
  } else if (gdb) {
    runs.resize(std::min(targets.size(), cores));
    for (std::size_t i = 0; i < targets.size(); ++i) runs[i % runs.size()].targets.push_back(i);
    for (auto& r : runs) r.argv = gdb_argv(targets, r);
  }
  run_all(runs, cores, deadline);

  std::vector<report::RankStacks> out;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const StackTarget& t = targets[i];
    report::RankStacks s{t.rank, t.host, t.pid, t.attempt, 0, {}, {}};
    s.taken_at_us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    const auto run = std::find_if(runs.begin(), runs.end(), [i](const Run& r) {
      return std::find(r.targets.begin(), r.targets.end(), i) != r.targets.end();
    });
    if (run == runs.end()) {
      s.problem = "neither eu-stack nor gdb is installed here (Debian: apt-get install elfutils)";
      out.push_back(std::move(s));
      continue;
    }
    std::string text = run->out;
    std::size_t reached = run->targets.size();  // how many of its processes it began
    if (!eu_stack) {
      const auto parts = report::split_by_marker(run->out);
      reached = 0;
      for (std::size_t k = 0; k < run->targets.size(); ++k) {
        if (parts.contains(targets[run->targets[k]].pid)) reached = k + 1;
      }
      const auto part = parts.find(t.pid);
      text = part == parts.end() ? std::string() : part->second;
    }
    const std::size_t place = static_cast<std::size_t>(
        std::find(run->targets.begin(), run->targets.end(), i) - run->targets.begin());
    if (run->spawn_failed) {
      s.problem = std::string(eu_stack ? "eu-stack" : "gdb") + " could not be started";
    } else if (!run->started || (run->killed && place + 1 >= reached)) {
      // Not begun, or the process it was reading when the time was up.
      s.problem = "not taken within " + seconds_text(limit) + " s";
      // The debugger stopped it to read it: let it go on, unless something else had stopped it.
      if (run->killed && !was_stopped[i]) ::kill(static_cast<pid_t>(t.pid), SIGCONT);
    } else {
      s.threads = eu_stack ? report::parse_eu_stack(text) : report::parse_gdb_backtrace(text);
      if (s.threads.empty()) {
        s.problem = report::gdb_problem(text, "the debugger printed no frame");
        if (s.problem.find("not permitted") != std::string::npos ||
            s.problem.find("Permission denied") != std::string::npos) {
          s.problem +=
              " (the kernel refuses to let the debugger attach: another user's process, or "
              "/proc/sys/kernel/yama/ptrace_scope above 0 for a process that is not the "
              "debugger's parent's child)";
        }
      }
    }
    // A rank running Python: its Python frames too, as threads of their own under "(Python)"
    // (read from its memory in microseconds, stopped or not: python_stacks.hpp).
    if (s.problem.empty()) {
      if (const auto py = python_stacks(t.pid)) {
        if (py->problem.empty()) {
          s.threads.insert(s.threads.end(), py->threads.begin(), py->threads.end());
        } else {
          s.threads.push_back(
              {std::string(report::kPythonThreadRoot), "(frames not read: " + py->problem + ")"});
        }
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

void write_stacks(const std::string& run_dir, const std::vector<report::RankStacks>& stacks) {
  const fs::path dir = fs::path(run_dir) / records::kStacksDir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const auto& s : stacks) {
    const std::string path =
        (dir / records::rank_file_name(s.rank, records::kStacksExtension)).string();
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << report::json_text(report::rank_stacks_to_json(s), 1) << "\n";
      if (!out) throw std::runtime_error("dtrain: cannot write " + tmp);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      throw std::runtime_error("dtrain: cannot rename " + tmp + " to " + path + ": " +
                               std::strerror(errno));
    }
  }
}

std::vector<report::RankStacks> read_stacks(const std::string& run_dir) {
  const fs::path dir = fs::path(run_dir) / records::kStacksDir;
  std::vector<report::RankStacks> stacks;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return stacks;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!records::parse_rank_file_name(name, records::kStacksExtension) ||
        !entry.is_regular_file(ec))
      continue;
    stacks.push_back(report::rank_stacks_from_json(read_small_file(entry.path().string()),
                                                   "dtrain: " + entry.path().string()));
  }
  return report::latest_attempt(std::move(stacks));
}

}  // namespace dtrain::cli
