// The rank prefix of the local terminal (docs/submit.md): each line a rank prints reaches the
// terminal as "[3] line", as torchrun's -l / --tee and srun's --label mark theirs, so that the
// lines of several ranks can be told apart. `dtrain run-rank` puts it there when the job's
// environment asks (kRankPrefixVariable=1: `dtrain submit` and `dtrain run` set it for a local job
// whose output is a terminal, unless --no-rank-prefix); the rank log is unchanged.
#pragma once

#include <string>
#include <string_view>
#include <thread>

namespace dtrain::cli {

inline constexpr const char* kRankPrefixVariable = "DTRAIN_RANK_PREFIX";

// Pure: `chunk`, read after `pending` (an unfinished line of the chunks before), as whole lines
// each after `prefix`; what is left without a newline stays in `pending`.
std::string prefixed_lines(std::string_view prefix, std::string_view chunk, std::string& pending);

// Two pipes whose lines go on to this process's stdout and stderr with "[RANK] " before each, from
// a thread of their own, until close_and_drain(). out_fd()/err_fd() are what the rank's output is
// written to instead of fds 1 and 2.
class RankPrefixer {
 public:
  explicit RankPrefixer(int rank);
  ~RankPrefixer();
  RankPrefixer(const RankPrefixer&) = delete;
  RankPrefixer& operator=(const RankPrefixer&) = delete;

  int out_fd() const { return out_[1]; }
  int err_fd() const { return err_[1]; }
  // Closes the write ends and waits until every line, an unfinished last one too, is out.
  void close_and_drain();

 private:
  void run();

  std::string prefix_;
  int out_[2] = {-1, -1};
  int err_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace dtrain::cli
