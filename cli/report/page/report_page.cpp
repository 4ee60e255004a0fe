#include "report/page/report_page.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "report/plain_number.hpp"

namespace dtrain::report {

using nlohmann::json;

std::vector<ScalingGroup> scaling_groups(const std::vector<ScalingRun>& runs) {
  std::map<std::string, std::vector<ScalingRun>> by_job;
  std::vector<std::string> order;
  for (const auto& r : runs) {
    if (!by_job.count(r.job)) order.push_back(r.job);
    by_job[r.job].push_back(r);
  }
  std::vector<ScalingGroup> out;
  for (const auto& job : order) {
    ScalingGroup g;
    g.job = job;
    std::vector<ScalingRun> usable;
    for (const auto& r : by_job[job]) {
      if (r.ranks > 0 && r.samples_per_second > 0) {
        usable.push_back(r);
      } else {
        g.left_out.push_back(r.label);
      }
    }
    if (usable.size() >= 2) g.table = scaling_table(usable);
    out.push_back(std::move(g));
  }
  return out;
}

json report_json(const std::vector<json>& runs, const std::vector<ScalingGroup>& groups,
                 const std::string& generated) {
  json scaling = json::array();
  for (const auto& g : groups) {
    if (!g.table) continue;
    json j = scaling_to_json(*g.table);
    j["job"] = g.job.empty() ? "(no job name)" : g.job;
    for (auto& row : j["rows"]) {
      row["speedup_text"] = plain_number(row["speedup"].get<double>()) + " x";
      row["efficiency_text"] = percent_text(row["efficiency"].get<double>());
      row["samples_per_second_text"] = plain_number(row["samples_per_second"].get<double>());
    }
    j["left_out"] = g.left_out;
    scaling.push_back(std::move(j));
  }
  json all = json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    json r = runs[i];
    r["id"] = "run-" + std::to_string(i);
    all.push_back(std::move(r));
  }
  return {{"generated", generated}, {"runs", all}, {"scaling", scaling}};
}

}  // namespace dtrain::report
