#include "report/page/job_facts.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "records/log_line.hpp"
#include "report/natural_order.hpp"
#include "report/page/run_page.hpp"
#include "report/plain_number.hpp"

namespace dtrain::report {

std::string job_state(const RunPageInput& in) {
  const FirstErrorReport& fe = in.first_error;
  if (in.places.empty() && !in.stats && !in.job_end) return "queued";
  if (!fe.running.empty() && !in.job_end) return "running";
  if (fe.culprit) return "failed";
  if (!fe.stopped.empty()) return "stopped";
  return "finished";
}

nlohmann::json job_json(const RunPageInput& in) {
  std::set<std::string, NaturalLess> hosts;  // node2 before node10
  std::optional<std::int64_t> first, last;
  for (const auto& [rank, p] : in.places) {
    if (p.start) hosts.insert(p.start->host);
    if (p.first_line && (!first || *p.first_line < *first)) first = p.first_line;
    if (p.last_line && (!last || *p.last_line > *last)) last = p.last_line;
  }
  const FirstErrorReport& fe = in.first_error;
  const std::string state = job_state(in);
  const bool running = state == "running";
  std::string exit = "-";
  if (in.job_end) {
    exit = "status " + std::to_string(in.job_end->status) +
           (in.job_end->walltime_reached ? " (walltime reached)" : "");
  } else if (running) {
    exit = "none yet (running)";
  } else if (!in.attempts.empty() && in.attempts.back().outcome != "restarted") {
    exit = "status " + std::to_string(in.attempts.back().status);
  } else if (state == "failed") {
    exit = "rank " + std::to_string(fe.culprit->rank) + " " + fe.culprit->how;
  } else if (state == "finished" && !fe.finished.empty()) {
    exit = "every rank exited with status 0";
  }
  int attempts = static_cast<int>(in.attempts.size());
  if (!in.attempts.empty() && in.attempts.back().outcome == "restarted") ++attempts;
  // A running job has not ended: its last log line is only the latest news, and its time so far
  // runs to the page's writing (a page written without a clock, to the last line).
  std::string end = last ? records::format_log_time(*last) : "-";
  std::string wall = first && last ? duration_text(static_cast<double>(*last - *first) / 1e6) : "-";
  if (running && first) {
    const std::int64_t until = std::max(in.now.value_or(*last), *last);
    end = "-";
    wall = duration_text(static_cast<double>(until - *first) / 1e6) + " so far";
  }
  nlohmann::json j = {
      {"name", in.summary.job.empty() ? in.summary.label : in.summary.job},
      {"id", in.summary.id},
      {"site", in.summary.site.empty() ? "-" : in.summary.site},
      {"nodes",
       in.summary.nodes > 0 ? std::to_string(in.summary.nodes) : std::to_string(hosts.size())},
      {"ranks_per_node",
       in.summary.ranks_per_node > 0 ? std::to_string(in.summary.ranks_per_node) : "-"},
      {"ranks", std::to_string(in.summary.world_size > 0 ? in.summary.world_size
                                                         : static_cast<int>(in.places.size()))},
      {"hosts", std::vector<std::string>(hosts.begin(), hosts.end())},
      {"attempts", std::max(attempts, 1)},
      {"state", state},
      {"exit", exit},
      {"start", first ? records::format_log_time(*first) : "-"},
      {"end", end},
      {"wall", wall}};
  if (running) j["last_line"] = last ? records::format_log_time(*last) : "-";
  j["lost"] =
      in.stats && in.stats->lost.attempts > 0 ? duration_text(in.stats->lost.lost_seconds) : "0 s";
  return j;
}

}  // namespace dtrain::report
