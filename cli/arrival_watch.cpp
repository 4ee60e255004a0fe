#include "arrival_watch.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "records/run_dir_layout.hpp"
#include "report/arrival_skew.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

namespace fs = std::filesystem;

// Seconds (ticks) between publications: 1 s up to 255 ranks, 5 s at 1,024 (the run directory
// then sees about 200 small files replaced a second, and rank 0's logger reads 1,024 every 5 s).
int publish_every(int size) { return 1 + size / 256; }
// The windows published beside the newest ones are those that change no more often than this:
// two loggers that publish this far apart still publish the same window (live_status.hpp).
constexpr double kAlignSeconds = 4;

using records::now_us;

}  // namespace

ArrivalWatch::ArrivalWatch(std::string run_dir, int rank, int size, std::string host,
                           const records::LivePage& page)
    : run_dir_(std::move(run_dir)),
      dir_((fs::path(run_dir_) / records::kArrivalsDir).string()),
      path_((fs::path(dir_) / records::rank_file_name(rank, "txt")).string()),
      rank_(rank),
      size_(size),
      host_(std::move(host)),
      page_(page) {}

void ArrivalWatch::tick() {
  if (++ticks_ % publish_every(size_) != 0) return;
  publish();
  if (rank_ == 0 && size_ > 1) judge();
}

void ArrivalWatch::publish() {
  // Slot 0: the process's first Context (dtrain.init()'s, or the torch backend's on it).
  const std::vector<records::LiveSnapshot> slots = page_.read();
  if (slots.empty() || slots[0].left == published_left_) return;
  const std::int64_t now = now_us();
  if (published_at_us_ > 0 && now > published_at_us_) {
    calls_per_second_ = static_cast<double>(slots[0].left - published_left_) * 1e6 /
                        static_cast<double>(now - published_at_us_);
  }
  published_left_ = slots[0].left;
  published_at_us_ = now;
  // The level whose windows change no more often than every kAlignSeconds.
  std::uint64_t every = 1;
  while (every < (std::uint64_t{1} << (records::kArrivalLevels - 1)) &&
         static_cast<double>(every * records::kArrivalWindowCalls) <
             calls_per_second_ * kAlignSeconds) {
    every *= 2;
  }
  report::RankArrivals out;
  out.rank = rank_;
  out.host = host_;
  out.doing = doing_.most();
  out.cpu_share = doing_.cpu_share();
  int aligned = 0;
  for (auto& w : page_.read_arrivals(0)) {
    // The window being filled and the newest whole one come first; then two of that level.
    const bool newest = out.windows.size() < 2;
    if (!newest && (w.index % every != 0 || aligned >= 2)) continue;
    if (!newest || w.index % every == 0) ++aligned;
    out.windows.push_back({w.index, w.first_enter_us, w.last_leave_us, std::move(w.waits_us)});
  }
  if (out.windows.empty()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    file << report::format_arrivals(out);
  }
  // Renamed into place: a reader never sees half a file.
  ::rename(tmp.c_str(), path_.c_str());
}

void ArrivalWatch::judge() {
  const std::vector<report::RankArrivals> ranks = read_rank_arrivals(run_dir_);
  // Every rank or none: a rank that has not published yet could be the one the others wait for.
  if (ranks.size() != static_cast<std::size_t>(size_)) return;
  const std::string line = report::straggler_change_line(report::judge_arrivals(ranks), named_);
  if (line.empty()) return;
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  append_whole_line((fs::path(run_dir_) / records::kStragglersLogFile).string(),
                    records::format_log_time(std::chrono::system_clock::now()) + " " + line);
}

}  // namespace dtrain::cli
