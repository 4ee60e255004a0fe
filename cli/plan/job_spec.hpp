// The job spec: the scheduler-neutral description of a training job that `dtrain submit` and
// `dtrain plan` read from YAML. Parsing is pure (text in, value out) and strict: unknown fields,
// wrong types and out-of-range values are all collected and thrown together as one SpecError.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtrain::plan {

struct JobSpec {
  std::string name;
  std::string site = "local";
  int nodes = 1;
  int ranks_per_node = 1;
  std::vector<std::string> command;
  std::vector<std::pair<std::string, std::string>> env;  // in file order
  std::string run_dir;  // empty: runs/<name>-<job id> under the submit directory

  int world_size() const { return nodes * ranks_per_node; }
};

// Largest spec accepted; a job spec is a few hundred bytes, so anything near this is a mistake
// (a data file passed by accident) and is refused before the YAML parser sees it.
inline constexpr std::size_t kMaxSpecBytes = 1 << 20;
inline constexpr int kMaxRanksPerNode = 1024;
inline constexpr int kMaxNodes = 100000;

JobSpec parse_job_spec(std::string_view text, const std::string& source_name);

// The known field names, in documentation order.
const std::vector<std::string>& job_spec_fields();

// The closest candidate within a small edit distance, or "" when none is close.
std::string closest_match(std::string_view given, const std::vector<std::string>& candidates);

}  // namespace dtrain::plan
