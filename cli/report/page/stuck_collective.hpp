// The collective a running job's ranks are in right now, for the report page (docs/report.md,
// "Collectives"): its slowest collectives are complete ones, so a hung job's page would list
// those and not the one it hangs in. From the heartbeats' verdict (hang.hpp's detect_hang): the
// first collective some ranks entered and others did not (who is in it, who is missing, since
// when), else one that ranks entered and none has left. Pure.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json_fwd.hpp>

#include "report/hang.hpp"

namespace dtrain::report {

// {"collective": "#5 allreduce of 4 KiB", "at": when the first rank entered it, "waited": how
// long before `now_us` that was (nullopt: before the latest heartbeat or step record), "in" and
// "missing": the ranks ("rank 2", "ranks 0-1,3", "none"), "text": the sentence the page shows,
// "row": the cells of the page's table of collectives}, or null when the heartbeats show no rank
// inside a collective.
nlohmann::json in_progress_json(const HangReport& hang, std::optional<std::int64_t> now_us);

}  // namespace dtrain::report
