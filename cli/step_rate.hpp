// `dtrain submit --wait`'s steps per second: rank 0's metric records (rank-00000.jsonl) followed
// as the job writes them, parsed by the records' one reader (records/metric_record.hpp).
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

namespace dtrain::cli {

// Steps per second over the last 50 step or interval records of the file at `path`, read
// incrementally (a partial last line waits for the next update): a step record is one step at its
// time, an interval record (the Meter's default detail after the first steps) its count of steps
// at its close. Over step records alone: (records - 1) / (last time - first time). nullopt until
// two records span some time, and while the file is absent. A damaged line is passed over: the
// rate is a hint, `dtrain stats` reports the error.
class StepRate {
 public:
  explicit StepRate(std::string path) : path_(std::move(path)) {}
  std::optional<double> update();

 private:
  struct Mark {
    double time = 0;
    long long steps = 0;  // steps read up to and including this record
  };
  std::string path_;
  std::size_t offset_ = 0;
  long long steps_ = 0;
  std::deque<Mark> marks_;
};

}  // namespace dtrain::cli
