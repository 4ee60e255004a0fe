#include "plan/queue_rules.hpp"

#include <algorithm>

#include "plan/schedulers/batch_script.hpp"

namespace dtrain::plan {
namespace {

bool fits_nodes(const QueueRule& rule, int nodes) {
  return nodes >= rule.min_nodes && (rule.max_nodes == 0 || nodes <= rule.max_nodes);
}

// A spec without a walltime gets the queue's default from the scheduler, which fits.
bool fits_walltime(const QueueRule& rule, const JobSpec& spec) {
  if (!spec.walltime_seconds) return true;
  const long w = *spec.walltime_seconds;
  return w >= rule.min_walltime && (rule.max_walltime == 0 || w <= rule.max_walltime);
}

std::vector<const QueueRule*> rules_of(const SiteProfile& site, const std::string& queue) {
  std::vector<const QueueRule*> rows;
  for (const auto& rule : site.queues) {
    if (rule.queue == queue) rows.push_back(&rule);
  }
  return rows;
}

bool fits(const std::vector<const QueueRule*>& rows, const JobSpec& spec) {
  return rows.empty() || std::any_of(rows.begin(), rows.end(), [&](const QueueRule* r) {
           return fits_nodes(*r, spec.nodes) && fits_walltime(*r, spec);
         });
}

std::string node_range(int min, int max) {
  return max == 0 ? std::to_string(min) + " or more"
                  : std::to_string(min) + "-" + std::to_string(max);
}

// The spec names a queue whose rows it breaks: blame the nodes when no row takes that many, else
// the walltime of the rows that do.
void blame(const JobSpec& spec, const std::string& source, const SiteProfile& site,
           const std::vector<const QueueRule*>& rows, std::vector<SpecIssue>& issues) {
  const std::string where = " in queue " + spec.queue + " on site " + site.name;
  std::vector<const QueueRule*> sized;
  for (const QueueRule* r : rows) {
    if (fits_nodes(*r, spec.nodes)) sized.push_back(r);
  }
  if (sized.empty()) {
    int min = rows.front()->min_nodes;
    int max = rows.front()->max_nodes;
    for (const QueueRule* r : rows) {
      min = std::min(min, r->min_nodes);
      max = max == 0 || r->max_nodes == 0 ? 0 : std::max(max, r->max_nodes);
    }
    issues.push_back({source, 0, "nodes",
                      "expected " + node_range(min, max) + " nodes" + where + ", got " +
                          std::to_string(spec.nodes)});
    return;
  }
  const QueueRule& r = *sized.front();
  const long w = *spec.walltime_seconds;
  const std::string bound = w < r.min_walltime ? "at least " + hh_mm_ss(r.min_walltime)
                                               : "at most " + hh_mm_ss(r.max_walltime);
  issues.push_back({source, 0, "walltime",
                    "expected " + bound + " for " + std::to_string(spec.nodes) + " nodes" + where +
                        (r.note.empty() ? "" : " (" + r.note + ")") + ", got " + hh_mm_ss(w)});
}

}  // namespace

std::string describe_queue_rule(const QueueRule& rule) {
  std::string text = rule.queue;
  if (!rule.note.empty()) text += " (" + rule.note + ")";
  text += ": " + node_range(rule.min_nodes, rule.max_nodes) + " nodes";
  if (rule.max_walltime > 0) {
    text += ", " + hh_mm_ss(rule.min_walltime) + " to " + hh_mm_ss(rule.max_walltime);
  } else if (rule.min_walltime > 0) {
    text += ", at least " + hh_mm_ss(rule.min_walltime);
  }
  return text;
}

std::string choose_queue(const JobSpec& spec, const std::string& source, const SiteProfile& site,
                         std::vector<SpecIssue>& issues) {
  if (!spec.queue.empty()) {
    const auto rows = rules_of(site, spec.queue);
    if (!fits(rows, spec)) blame(spec, source, site, rows, issues);
    return spec.queue;
  }
  for (const auto& queue : site.default_queues) {
    if (fits(rules_of(site, queue), spec)) return queue;
  }
  if (site.default_queues.empty()) return "";
  std::string limits;
  for (const auto& queue : site.default_queues) {
    for (const QueueRule* r : rules_of(site, queue)) {
      limits += (limits.empty() ? "" : "; ") + describe_queue_rule(*r);
    }
  }
  issues.push_back(
      {source, 0, "queue",
       "site " + site.name + " has no default queue for " + std::to_string(spec.nodes) + " nodes" +
           (spec.walltime_seconds ? " and a walltime of " + hh_mm_ss(*spec.walltime_seconds) : "") +
           "; expected a queue in the job spec, or nodes and walltime that fit one of: " + limits});
  return "";
}

}  // namespace dtrain::plan
