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

// The watch's period and how often it reads the waits: report/hang_decision.hpp's, whose
// constants count in them.
constexpr auto kPeriod = report::kWatchPeriod;
constexpr int kReadWaitsEvery = report::kReadWaitsEvery;
constexpr std::string_view kWaitPrefix = "wait-";
// How long the stacks of this node's ranks may take before the verdict's rank is ended: a process
// ptrace cannot stop (blocked in the kernel) delays the abort by this much at most.
constexpr auto kStacksLimit = std::chrono::seconds(8);

using records::now_us;

// The names of the wait files in `live_dir` (wait-NNNNNN.txt).
std::vector<std::string> list_waits(const std::string& live_dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(live_dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name.starts_with(kWaitPrefix) && name.ends_with(".txt")) names.emplace_back(name);
    }
    ::closedir(d);
  }
  return names;
}

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
  std::optional<report::RankWait> published;  // the wait published (its collective, slot, since)
  std::optional<report::ProcessSample> before;
  std::optional<report::ProcessSample> main_before;  // its main thread's (straggler activity)
  std::chrono::steady_clock::time_point before_at;
  std::vector<report::RankWait> waits;
  struct timespec waits_mtime {};
  int wait_names = 0;                         // wait files listed at the last change
  std::optional<std::int64_t> names_seen_us;  // when this logger first saw any, this wait
  bool waits_stale = false;                   // the folder changed since the waits were read
  int ticks = 0;
  bool spoke = false;                    // a verdict was given (once per rank and job)
  std::optional<ArrivalWatch> arrivals;  // the straggler watch, on this thread too
  bool arrivals_failed = false;
  std::optional<LinkWatch> links;        // which node is cut off, when every rank waits
  std::vector<report::NodeReach> reach;  // the nodes' link records, as last read
  bool reach_stale = true;               // RUN_DIR/live changed since
  report::WatchMemory memory;            // the decision's, between ticks
  // This logger ended its rank on the node cut off: its wait stays in RUN_DIR/live, so that the
  // other side, which reads the folder later, still sees every rank waiting and names the node
  // (that side's speaker removes it once it has spoken).
  bool keep_wait = false;
};

struct LiveWatch::Sample {
  std::vector<records::LiveSnapshot> slots;
  std::int64_t now_us = 0;
  std::string doing = "in an unknown state";
  bool able = true;  // report::can_wait: a process stopped, traced or blocked in the kernel is not
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
  const Sample now = sample();
  update_own_wait(now);
  if (state_->spoke || ++state_->ticks % kReadWaitsEvery != 0) return;
  if (!read_waits(now.now_us)) return;
  act(judge(now));
}

LiveWatch::Sample LiveWatch::sample() {
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
  Sample now;
  now.slots = page_.read();
  now.now_us = now_us();
  const auto steady_now = std::chrono::steady_clock::now();
  const std::optional<report::ProcessSample> process = sample_process(child_);
  const std::optional<report::ProcessSample> main_thread = sample_main_thread(child_);
  if (process && st.before) {
    const double seconds = std::chrono::duration<double>(steady_now - st.before_at).count();
    now.doing = report::describe_process(*st.before, *process, seconds);
    // What the rank does outside its collectives, for the straggler line (slot 0: the Context the
    // straggler watch judges).
    const bool inside = !now.slots.empty() && now.slots[0].inside();
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
  now.able = !process || report::can_wait(*process);
  return now;
}

void LiveWatch::update_own_wait(const Sample& now) {
  State& st = *state_;
  if (st.published) {
    const records::LiveSnapshot& in = now.slots[static_cast<std::size_t>(st.published->slot)];
    if (in.left > st.published->seq || in.entered > st.published->seq + 1) {
      ::unlink(st.wait_path.c_str());
      st.published.reset();
      st.links->forget();
      st.memory.all_waiting_at_us.reset();
      st.memory.all_waits.clear();
    }
  }
  if (st.published || !now.able) return;
  // Of this process's Contexts, the one waiting longest.
  std::optional<report::RankWait> wait;
  const std::chrono::seconds after = report::publish_after(*settings_.hang_after);
  for (std::size_t k = 0; k < now.slots.size(); ++k) {
    auto w = report::wait_to_publish(rank_, host_, now.slots[k], now.now_us, after);
    if (w && (!wait || w->since_us < wait->since_us)) {
      wait = std::move(w);
      wait->slot = static_cast<int>(k);
    }
  }
  if (!wait) return;
  std::error_code ec;
  fs::create_directories(st.live_dir, ec);
  const std::string tmp = st.wait_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << report::format_wait(*wait);
  }
  // Renamed into place: a reader never sees half a line.
  if (::rename(tmp.c_str(), st.wait_path.c_str()) == 0) st.published = std::move(wait);
}

bool LiveWatch::read_waits(std::int64_t now_us) {
  State& st = *state_;
  struct stat dir {};
  if (::stat(st.live_dir.c_str(), &dir) != 0) return false;  // nobody has waited yet
  if (dir.st_mtim.tv_sec != st.waits_mtime.tv_sec ||
      dir.st_mtim.tv_nsec != st.waits_mtime.tv_nsec) {
    st.waits_mtime = dir.st_mtim;
    st.reach_stale = true;
    st.waits_stale = true;
    st.wait_names = static_cast<int>(list_waits(st.live_dir).size());
    if (st.wait_names == 0) st.names_seen_us.reset();
    if (st.wait_names > 0 && !st.names_seen_us) st.names_seen_us = now_us;
  }
  // The files' words only when a decision may need them (report::read_waits_now).
  if (st.waits_stale && st.names_seen_us &&
      report::read_waits_now(st.wait_names, size_, *st.names_seen_us, now_us, *settings_.hang_after,
                             !st.memory.all_waits.empty())) {
    st.waits_stale = false;
    st.waits.clear();
    for (const std::string& name : list_waits(st.live_dir)) {
      if (auto w = report::parse_wait(read_small_file((fs::path(st.live_dir) / name).string()))) {
        st.waits.push_back(std::move(*w));
      }
    }
  } else if (st.waits_stale) {
    st.waits.clear();  // not to be judged on what the folder held before it changed
  }
  return !st.waits.empty();
}

report::Decision LiveWatch::judge(const Sample& now) {
  State& st = *state_;
  report::WatchView view;
  view.rank = rank_;
  view.host = host_;
  view.size = size_;
  view.hang_after = *settings_.hang_after;
  view.abort = settings_.abort;
  view.slots = now.slots;
  view.doing = now.doing;
  view.able = now.able;
  view.own_wait = st.published;
  view.waits = st.waits;
  view.now_us = now.now_us;
  // Whether a node's link is cut, asked as soon as every rank waits (a few seconds).
  if (report::every_rank_waits(view)) st.links->probe_once(st.waits);
  if (report::link_check_due(view, st.memory)) {
    // Every logger may be on the node cut off, so each reads the records (O(nodes), fewer than
    // the waits it reads), and only when the folder changed.
    // The hosts of every rank's wait, as last seen all together (the cut node's may be gone).
    const auto& seen = st.memory.all_waits.empty() ? st.waits : st.memory.all_waits;
    if (report::hosts_of(seen).size() >= 3 && st.reach_stale) {
      st.reach = st.links->read();
      st.reach_stale = false;
    }
  }
  view.reach = st.reach;
  const std::string hang_log = (fs::path(run_dir_) / records::kHangLogFile).string();
  return report::decide(view, st.memory, [&] {
    struct stat log {};
    return ::stat(hang_log.c_str(), &log) == 0 && log.st_size > 0;
  });
}

void LiveWatch::act(const report::Decision& decision) {
  State& st = *state_;
  if (!decision.verdict) return;
  st.spoke = true;
  st.keep_wait = decision.keep_wait;
  // The waits the cut node's loggers left (keep_wait) go once this side has named it.
  if (!decision.cut_host.empty()) {
    for (const auto& w : st.waits) {
      if (w.host != decision.cut_host) continue;
      const std::string name = std::string(kWaitPrefix) + records::rank_file_name(w.rank, "txt");
      ::unlink((fs::path(st.live_dir) / name).string().c_str());
    }
  }
  if (decision.say) {
    const std::string line =
        *decision.verdict + (settings_.abort
                                 ? "; DTRAIN_ON_HANG=abort: " + decision.action
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
