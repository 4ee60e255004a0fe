// The Job section of the report page (docs/report.md): the job's name, site and size, its attempts,
// how it stands (queued, running, failed, stopped, finished) and how it ended, or, while it runs,
// for how long it has been running. Pure: run_page.hpp gathers the input.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace dtrain::report {

struct RunPageInput;  // run_page.hpp

// "queued" (a batch job whose ranks have not started), "running" (ranks without an exit line
// while no rank has failed and no job-end record says the job is over), "failed" (a culprit),
// "stopped" (by the walltime or a cancel) or "finished".
std::string job_state(const RunPageInput& in);

// The section's facts. A running job has no end: its "wall" is the time from its first log line
// to `in.now` (the page's writing), "so far", and "end" is "-".
nlohmann::json job_json(const RunPageInput& in);

}  // namespace dtrain::report
