#include "plan/allocation.hpp"

#include <algorithm>
#include <set>

#include "common/words.hpp"
#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {

std::optional<HeldAllocation> held_allocation(const launch::Environment& env) {
  std::optional<HeldAllocation> found;
  for (const auto& name : scheduler_names()) {
    const SchedulerAdapter* adapter = scheduler_adapter(name);
    if (found) {
      if (adapter->held_job_variable() == found->variable) found->schedulers.push_back(name);
      continue;
    }
    auto job = adapter->held_job(env);
    if (!job) continue;
    found = HeldAllocation{std::string(adapter->held_job_variable()),
                           job->id,
                           {name},
                           job->default_site,
                           job->nodes,
                           job->node_file};
  }
  // An adapter later in the registry that reads the same variable may name the default site.
  if (found && found->default_site.empty()) {
    for (const auto& name : found->schedulers) {
      const auto job = scheduler_adapter(name)->held_job(env);
      if (job && !job->default_site.empty()) {
        found->default_site = job->default_site;
        break;
      }
    }
  }
  return found;
}

std::string allocation_variables() {
  std::vector<std::string> names;
  for (const auto& name : scheduler_names()) {
    const std::string variable(scheduler_adapter(name)->held_job_variable());
    if (!variable.empty() && std::find(names.begin(), names.end(), variable) == names.end()) {
      names.push_back(variable);
    }
  }
  return join_alternatives(names);
}

int distinct_hosts(std::string_view text) {
  std::set<std::string_view> hosts;
  while (!text.empty()) {
    const auto end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (!line.empty()) hosts.insert(line);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return static_cast<int>(hosts.size());
}

std::string site_mismatch(const HeldAllocation& allocation, const std::string& site_name,
                          const std::string& scheduler) {
  const auto& ok = allocation.schedulers;
  if (std::find(ok.begin(), ok.end(), scheduler) != ok.end()) return "";
  return "site " + site_name + " runs on " + scheduler + ", and this shell holds " + ok.front() +
         " job " + allocation.id + " (" + allocation.variable + "); expected a site on " +
         join_alternatives(ok) + " (--site)";
}

}  // namespace dtrain::plan
