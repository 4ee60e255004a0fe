// The report page's reading of a run directory (`dtrain report`, docs/report.md): what
// report::run_page_json draws, gathered through the run directory's readers (run_dir.hpp) as
// `stats` and `logs --first-error` gather theirs, so cmd_report.cpp only writes the page.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "report/page/run_page.hpp"
#include "report/scaling.hpp"

namespace dtrain::cli {

struct RunPageRead {
  report::RunPageInput page;
  std::optional<report::ScalingRun> scaling;  // none without metric files
};

// One run directory's page input, `now_us` (microseconds since the epoch) being when the page is
// written. Throws UsageError for what is no run directory (no plan.json, rank log or metric file)
// and the readers' errors for a bad record.
RunPageRead read_run_page_input(const std::string& run_dir, double straggler_threshold,
                                std::int64_t now_us);

}  // namespace dtrain::cli
