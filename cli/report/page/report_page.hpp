// The whole page of `dtrain report` (docs/report.md): each run's section (run_page.hpp) and, across
// runs, the scaling study of each job (scaling_table, as `dtrain stats` computes it). Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/scaling.hpp"

namespace dtrain::report {

// The runs' throughput for the scaling study, grouped by job name (runs without a name form the
// group ""); a job with fewer than two runs with throughput has no table.
struct ScalingGroup {
  std::string job;
  std::optional<ScalingTable> table;  // two runs or more with throughput
  std::vector<std::string> left_out;  // labels of runs without throughput
};
std::vector<ScalingGroup> scaling_groups(const std::vector<ScalingRun>& runs);

// The whole page: each run's model (run_page_json) with the id of its section ("run-0", ...), and
// the scaling groups; a scaling row links to its run's section by the run's label, so the caller
// makes labels unique.
nlohmann::json report_json(const std::vector<nlohmann::json>& runs,
                           const std::vector<ScalingGroup>& groups, const std::string& generated);

}  // namespace dtrain::report
