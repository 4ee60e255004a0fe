#include "live_watch.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include "arrival_watch.hpp"
#include "common/errors.hpp"
#include "common/run_settings.hpp"
#include "link_watch.hpp"
#include "process.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "records/run_dir_layout.hpp"
#include "report/hang_watch.hpp"
#include "report/node_reach.hpp"
#include "report/rank_activity.hpp"
#include "report/rank_ranges.hpp"
#include "run_dir.hpp"
#include "stack_capture.hpp"

namespace dtrain::cli {
namespace {

namespace fs = std::filesystem;

constexpr auto kPeriod = std::chrono::seconds(1);
// The waits are read every other period: a verdict within 2 s of the waits appearing.
constexpr int kReadWaitsEvery = 2;
// How long after its own wait a waiting rank lets the culprit's logger speak before it names the
// ranks that published nothing (their node may be gone): the logger reads within 2 s, so 20 s is
// ample even on a loaded file system.
constexpr auto kSilentGrace = std::chrono::seconds(20);
constexpr std::string_view kWaitPrefix = "wait-";
// How long, once every rank waits, the lowest waits for each node's link probe (link_watch.hpp)
// before it gives up naming a node: the probes take kProbeLimit, the records are read every other
// period.
constexpr auto kReachGrace = kProbeLimit + 3 * kPeriod;
// How long the lowest waiting rank holds back its cut-node verdict (and the end of its rank), so
// that the cut node's loggers, which read the same records every other period, end their ranks
// first: two of their readings.
constexpr auto kCutNodeFirst = 2 * kReadWaitsEvery * kPeriod;
// How long the stacks of this node's ranks may take before the verdict's rank is ended: a process
// ptrace cannot stop (blocked in the kernel) delays the abort by this much at most.
constexpr auto kStacksLimit = std::chrono::seconds(8);

using records::now_us;

std::optional<report::ProcessSample> sample_process(pid_t pid) {
  const std::string base = "/proc/" + std::to_string(pid);
  auto s = report::parse_proc_stat(read_small_file(base + "/stat"), ::sysconf(_SC_CLK_TCK));
  if (s) {
    s->wchan = read_small_file(base + "/wchan");
    while (!s->wchan.empty() && (s->wchan.back() == '\n' || s->wchan.back() == ' ')) {
      s->wchan.pop_back();
    }
  }
  return s;
}

// The process's main thread alone (its state and its own CPU time; no wait channel).
std::optional<report::ProcessSample> sample_main_thread(pid_t pid) {
  const std::string id = std::to_string(pid);
  return report::parse_proc_stat(read_small_file("/proc/" + id + "/task/" + id + "/stat"),
                                 ::sysconf(_SC_CLK_TCK));
}

}  // namespace

LiveWatchSettings live_watch_settings(const launch::Environment& env) {
  LiveWatchSettings s;
  auto refuse = [](std::string_view variable, const std::string& value, std::string_view expected) {
    return UsageError("dtrain: " + std::string(variable) + ": expected " + std::string(expected) +
                      ", got \"" + value + "\"");
  };
  if (const auto it = env.find(std::string(kHangAfterVariable));
      it != env.end() && !it->second.empty()) {
    const auto after = parse_hang_after(it->second);
    if (!after) throw refuse(kHangAfterVariable, it->second, kHangAfterExpected);
    s.hang_after = after->off ? std::nullopt : std::optional(after->after);
  }
  if (const auto it = env.find(std::string(kOnHangVariable));
      it != env.end() && !it->second.empty()) {
    const auto policy = parse_on_hang(it->second);
    if (!policy) throw refuse(kOnHangVariable, it->second, kOnHangExpected);
    s.abort = *policy == OnHang::kAbort;
  }
  return s;
}

struct LiveWatch::State {
  std::string live_dir;
  std::string wait_path;
  std::optional<std::uint64_t> published;  // the collective # of the wait published
  int published_slot = 0;                  // and its Context's slot
  std::int64_t published_at_us = 0;
  std::optional<report::ProcessSample> before;
  std::optional<report::ProcessSample> main_before;  // its main thread's (straggler activity)
  std::chrono::steady_clock::time_point before_at;
  std::vector<report::RankWait> waits;
  struct timespec waits_mtime {};
  int ticks = 0;
  bool spoke = false;                    // a verdict was given (once per rank and job)
  std::optional<ArrivalWatch> arrivals;  // the straggler watch, on this thread too
  bool arrivals_failed = false;
  std::optional<LinkWatch> links;                 // which node is cut off, when every rank waits
  std::optional<std::int64_t> all_waiting_at_us;  // when this logger saw every rank waiting
  std::vector<report::NodeReach> reach;           // the nodes' link records, as last read
  bool reach_stale = true;                        // RUN_DIR/live changed since
  // The lowest waiting rank's cut-node verdict, held back kCutNodeFirst for the cut node's own.
  std::optional<std::string> cut_verdict;
  std::string cut_action;
  std::string cut_host;
  std::int64_t cut_verdict_at_us = 0;
  // This logger ended its rank on the node cut off: its wait stays in RUN_DIR/live, so that the
  // other side, which reads the folder later, still sees every rank waiting and names the node
  // (that side's speaker removes it once it has spoken).
  bool keep_wait = false;
};

LiveWatch::LiveWatch(LiveWatchSettings settings, std::string run_dir, int rank, int size,
                     std::string host, pid_t child, const records::LivePage& page)
    : settings_(settings),
      run_dir_(std::move(run_dir)),
      rank_(rank),
      size_(size),
      host_(std::move(host)),
      child_(child),
      page_(page),
      state_(std::make_unique<State>()) {
  state_->live_dir = (fs::path(run_dir_) / records::kLiveDir).string();
  state_->wait_path = (fs::path(state_->live_dir) /
                       (std::string(kWaitPrefix) + records::rank_file_name(rank_, "txt")))
                          .string();
  state_->arrivals.emplace(run_dir_, rank_, size_, host_, page_);
  state_->links.emplace(state_->live_dir, host_);
  thread_ = std::thread([this] { loop(); });
}

LiveWatch::~LiveWatch() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (state_->published && !state_->keep_wait) ::unlink(state_->wait_path.c_str());
  // The rank's last collectives, for `dtrain stats` and the report.
  if (!state_->arrivals_failed) {
    try {
      state_->arrivals->publish();
    } catch (const std::exception&) {
      // Evidence for later only; the rank's exit status matters more than this file.
    }
  }
}

void LiveWatch::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    lock.unlock();
    try {
      tick();
    } catch (const std::exception& e) {
      // The watch must never take the rank down with it: say why it stops and let the job run.
      std::fprintf(stderr, "dtrain: run-rank: rank %d: the hang watch stopped: %s\n", rank_,
                   e.what());
      lock.lock();
      return;
    }
    lock.lock();
    wake_.wait_for(lock, kPeriod, [this] { return stop_; });
  }
}

void LiveWatch::tick() {
  State& st = *state_;
  if (!st.arrivals_failed) {
    try {
      st.arrivals->tick();
    } catch (const std::exception& e) {
      // The straggler watch is a diagnosis: the hang watch goes on without it.
      st.arrivals_failed = true;
      std::fprintf(stderr, "dtrain: run-rank: rank %d: the straggler watch stopped: %s\n", rank_,
                   e.what());
    }
  }
  const std::vector<records::LiveSnapshot> slots = page_.read();
  const std::int64_t now = now_us();
  const auto steady_now = std::chrono::steady_clock::now();
  const std::optional<report::ProcessSample> process = sample_process(child_);
  const std::optional<report::ProcessSample> main_thread = sample_main_thread(child_);
  std::string doing = "in an unknown state";
  if (process && st.before) {
    const double seconds = std::chrono::duration<double>(steady_now - st.before_at).count();
    doing = report::describe_process(*st.before, *process, seconds);
    // What the rank does outside its collectives, for the straggler line (slot 0: the Context the
    // straggler watch judges).
    const bool inside = !slots.empty() && slots[0].inside();
    if (main_thread && st.main_before) {
      if (const auto a = report::sample_activity(*st.main_before, *main_thread, seconds, inside)) {
        st.arrivals->note(*a, report::sample_cpu_share(*st.main_before, *main_thread, seconds));
      }
    }
  }
  if (process) {
    st.before = process;
    st.main_before = main_thread;
    st.before_at = steady_now;
  }

  // This rank's own wait: published once it has waited hang_after, removed once it left.
  if (st.published) {
    const records::LiveSnapshot& in = slots[static_cast<std::size_t>(st.published_slot)];
    if (in.left > *st.published || in.entered > *st.published + 1) {
      ::unlink(st.wait_path.c_str());
      st.published.reset();
      st.links->forget();
      st.all_waiting_at_us.reset();
    }
  }
  // A process stopped, traced or blocked in the kernel is not waiting, even inside a collective.
  const bool able = !process || report::can_wait(*process);
  if (!st.published && able) {
    // Of this process's Contexts, the one waiting longest.
    std::optional<report::RankWait> wait;
    for (std::size_t k = 0; k < slots.size(); ++k) {
      auto w = report::wait_to_publish(rank_, host_, slots[k], now, *settings_.hang_after);
      if (w && (!wait || w->since_us < wait->since_us)) {
        wait = std::move(w);
        wait->slot = static_cast<int>(k);
      }
    }
    if (wait) {
      std::error_code ec;
      fs::create_directories(st.live_dir, ec);
      const std::string tmp = st.wait_path + ".tmp";
      {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << report::format_wait(*wait);
      }
      // Renamed into place: a reader never sees half a line.
      if (::rename(tmp.c_str(), st.wait_path.c_str()) == 0) {
        st.published = wait->seq;
        st.published_slot = wait->slot;
        st.published_at_us = now;
      }
    }
  }

  if (st.spoke || ++st.ticks % kReadWaitsEvery != 0) return;
  struct stat dir {};
  if (::stat(st.live_dir.c_str(), &dir) != 0) return;  // nobody has waited yet
  if (dir.st_mtim.tv_sec != st.waits_mtime.tv_sec ||
      dir.st_mtim.tv_nsec != st.waits_mtime.tv_nsec) {
    st.waits_mtime = dir.st_mtim;
    st.reach_stale = true;
    st.waits.clear();
    if (DIR* d = ::opendir(st.live_dir.c_str())) {
      while (const dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (!name.starts_with(kWaitPrefix) || !name.ends_with(".txt")) continue;
        if (auto w = report::parse_wait(
                read_small_file((fs::path(st.live_dir) / std::string(name)).string()))) {
          st.waits.push_back(std::move(*w));
        }
      }
      ::closedir(d);
    }
  }
  if (st.waits.empty()) return;
  const std::optional<std::string> all_waiting =
      st.published ? report::all_waiting_verdict(size_, st.waits, now) : std::nullopt;
  // Every rank waits: whether a node's link is cut, asked as soon as it shows (a few seconds).
  if (all_waiting) st.links->probe_once(st.waits);
  // The waiters publish within a period of reaching hang_after: give them two more, so that the
  // verdict names all of them, not the first one.
  std::int64_t earliest = st.waits.front().since_us;
  for (const auto& w : st.waits) earliest = std::min(earliest, w.since_us);
  const auto collect =
      std::chrono::duration_cast<std::chrono::microseconds>(*settings_.hang_after + 2 * kPeriod);
  if (now - earliest < collect.count()) return;

  // A rank that waits itself is no culprit; else each Context's waits against that Context.
  std::optional<std::string> verdict;
  for (std::size_t k = 0; k < slots.size() && !verdict && !st.published; ++k) {
    std::vector<report::RankWait> same;
    for (const auto& w : st.waits) {
      if (w.slot == static_cast<int>(k)) same.push_back(w);
    }
    if (!same.empty()) {
      verdict = report::hang_verdict(rank_, host_, slots[k], doing, same, now,
                                     able ? settings_.hang_after : std::nullopt);
    }
  }
  // What the abort ends: this logger's rank, unless a cut node's verdict says more.
  std::string action = "ending rank " + std::to_string(rank_);
  bool say = true;  // false: this logger ends its rank and leaves the words to another
  // Every rank waits in one collective: the lowest says so, once the last has waited as long,
  // naming the node cut off when the nodes' probes agree on one (3 nodes or more). The node cut
  // off ends its own ranks (each logger there its own, the lowest saying so) a few seconds before
  // the lowest of the other side ends its rank, not at fault, so that its side stops waiting:
  // once that side's ranks end, the waits change and the cut node's loggers would judge no more.
  if (!verdict && st.cut_verdict &&
      now - st.cut_verdict_at_us >=
          std::chrono::duration_cast<std::chrono::microseconds>(kCutNodeFirst).count()) {
    verdict = st.cut_verdict;
    action = st.cut_action;
  }
  if (!verdict && !st.cut_verdict && all_waiting) {
    const std::vector<std::string> hosts = report::hosts_of(st.waits);
    // Every logger may be on the node cut off, so each reads the records (O(nodes), fewer than
    // the waits it reads), and only when the folder changed.
    if (hosts.size() >= 3 && st.reach_stale) {
      st.reach = st.links->read();
      st.reach_stale = false;
    }
    const std::vector<report::NodeReach>& reach = st.reach;
    const std::optional<std::string> cut = report::cut_node(hosts, reach);
    // The lowest waiting rank speaks; once a node is cut off, the lowest of the other side, and
    // on that node its own lowest.
    int lowest = size_;
    int lowest_here = size_;
    for (const auto& w : st.waits) {
      if (!cut || w.host != *cut) lowest = std::min(lowest, w.rank);
      if (w.host == host_) lowest_here = std::min(lowest_here, w.rank);
    }
    if (cut && *cut == host_ && settings_.abort) {
      verdict = report::cut_node_verdict(st.waits, reach, now);
      action = report::cut_node_abort(st.waits, *cut, rank_, host_);
      say = lowest_here == rank_;
      st.keep_wait = true;
    } else if (lowest == rank_) {
      if (!st.all_waiting_at_us) st.all_waiting_at_us = now;
      if (cut) {
        const std::optional<std::string> v = report::cut_node_verdict(st.waits, reach, now);
        if (settings_.abort) {
          st.cut_verdict = v;
          st.cut_verdict_at_us = now;
          st.cut_action = report::cut_node_abort(st.waits, *cut, rank_, host_);
          st.cut_host = *cut;
        } else {
          verdict = v;
        }
      } else if (hosts.size() < 3 || reach.size() >= hosts.size() ||
                 now - *st.all_waiting_at_us >=
                     std::chrono::duration_cast<std::chrono::microseconds>(kReachGrace).count()) {
        verdict = all_waiting;
      }
    }
  }
  // Nobody named a cause: the lowest waiting rank names the ranks that published nothing.
  if (!verdict && !st.cut_verdict && st.published &&
      now - st.published_at_us >=
          std::chrono::duration_cast<std::chrono::microseconds>(kSilentGrace).count()) {
    std::set<int> waiting;
    for (const auto& w : st.waits) waiting.insert(w.rank);
    const std::string hang_log = (fs::path(run_dir_) / records::kHangLogFile).string();
    struct stat log {};
    const bool named = ::stat(hang_log.c_str(), &log) == 0 && log.st_size > 0;
    if (!named && !waiting.empty() && *waiting.begin() == rank_) {
      std::vector<int> missing;
      for (int r = 0; r < size_; ++r) {
        if (!waiting.contains(r)) missing.push_back(r);
      }
      if (!missing.empty()) {
        verdict = report::silent_ranks_verdict(missing, st.waits, now,
                                               *settings_.hang_after + kSilentGrace);
      }
    }
  }
  if (!verdict) return;
  st.spoke = true;
  // The waits the cut node's loggers left (keep_wait) go once this side has named it.
  if (!st.cut_host.empty()) {
    for (const auto& w : st.waits) {
      if (w.host != st.cut_host) continue;
      const std::string name = std::string(kWaitPrefix) + records::rank_file_name(w.rank, "txt");
      ::unlink((fs::path(st.live_dir) / name).string().c_str());
    }
  }
  if (say) {
    const std::string line =
        *verdict + (settings_.abort ? "; DTRAIN_ON_HANG=abort: " + action
                                    : std::string("; DTRAIN_ON_HANG=wait: the job goes on"));
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
    try {
      append_whole_line((fs::path(run_dir_) / records::kHangLogFile).string(),
                        records::format_log_time(std::chrono::system_clock::now()) + " " + line);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dtrain: run-rank: rank %d: %s\n", rank_, e.what());
    }
    take_stacks();
  }
  // SIGKILL ends a stopped process too; the launcher then ends the job, and the other ranks name
  // this one as lost.
  if (settings_.abort) ::kill(child_, SIGKILL);
}

void LiveWatch::take_stacks() {
  try {
    const RankProcesses ranks = find_rank_processes(run_dir_);
    if (ranks.here.empty()) return;
    const auto stacks = capture_stacks(ranks.here, kStacksLimit);
    write_stacks(run_dir_, stacks);
    std::vector<int> taken;
    for (const auto& s : stacks) taken.push_back(s.rank);
    std::fprintf(stderr,
                 "dtrain: hang: the stacks of %s on %s are in %s/%s (dtrain logs --hang %s "
                 "shows them merged)\n",
                 report::ranks_text(taken).c_str(), host_.c_str(), run_dir_.c_str(),
                 std::string(records::kStacksDir).c_str(), run_dir_.c_str());
  } catch (const std::exception& e) {
    // The stacks are evidence, not the verdict: without them the watch still acts.
    std::fprintf(stderr, "dtrain: run-rank: rank %d: the stacks were not taken: %s\n", rank_,
                 e.what());
  }
}

}  // namespace dtrain::cli
