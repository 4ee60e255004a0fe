// The straggler watch in each rank's logger (`dtrain run-rank`, beside the hang watch of
// live_watch.hpp, on its thread; the judgement is report/arrival_skew.hpp): every second (at 1,024
// ranks every 5 s) it copies its rank's latest windows of collective waits out of the live status
// page into RUN_DIR/arrivals/rank-NNNNN.txt (one small file per rank, replaced, never grown); rank
// 0's logger reads them all and, when the verdict changes (a straggler named, or no longer), writes
// one line to its stderr (the job's output) and RUN_DIR/stragglers.log, with what the straggler
// does outside its collectives (each logger publishes its own rank's, from the hang watch's
// samples of the process: report/rank_activity.hpp). `dtrain stats` and the
// report read the same files afterwards: each logger publishes once more when its rank ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "records/live_status.hpp"
#include "report/arrival_skew.hpp"
#include "report/rank_activity.hpp"

namespace dtrain::cli {

class ArrivalWatch {
 public:
  // `page` must outlive it.
  ArrivalWatch(std::string run_dir, int rank, int size, std::string host,
               const records::LivePage& page);
  // Once a second (the hang watch's period).
  void tick();
  // Publishes what the page holds now (when the rank has ended: the last windows).
  void publish();
  // What the hang watch's sample of the process says the rank did outside its collectives
  // (report/rank_activity.hpp), published with the windows.
  void note(report::Activity activity, double cpu_share) { doing_.add(activity, cpu_share); }

 private:
  void judge();

  std::string run_dir_;
  std::string dir_;   // RUN_DIR/arrivals
  std::string path_;  // RUN_DIR/arrivals/rank-NNNNN.txt
  int rank_;
  int size_;
  std::string host_;
  const records::LivePage& page_;
  int ticks_ = 0;
  std::uint64_t published_left_ = 0;  // the rank's collectives at the last publication
  std::int64_t published_at_us_ = 0;
  double calls_per_second_ = 0;
  std::optional<report::NamedStraggler> named_;  // rank 0's logger: whom its last line named
  report::ActivityTally doing_;
};

}  // namespace dtrain::cli
