// What a run directory says about its job (plan.json, job.yaml) and what it is called: one
// record, read by cli/run_summary.cpp's parser and shown by `dtrain stats` and `dtrain report`
// (RunPageInput holds it as it is). Pure data.
#pragma once

#include <optional>
#include <string>

namespace dtrain::report {

struct RunSummary {
  std::string label;                 // the run directory's name
  std::string job, id, site;         // plan.json's "job"; "" where it does not say
  int nodes = 0;                     // plan.json; 0 where it does not say
  int ranks_per_node = 0;            // the same
  int world_size = 0;                // the same
  std::optional<int> gpus_per_rank;  // job.yaml; none where it does not say

  bool operator==(const RunSummary&) const = default;
};

}  // namespace dtrain::report
