#include "report/unreadable_logs.hpp"

#include <algorithm>

#include "records/log_line.hpp"
#include "report/alike_ends.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {

void add_unreadable_logs(FirstErrorReport& report, std::vector<UnreadableLog> unreadable) {
  report.unreadable = std::move(unreadable);
  if (report.unreadable.empty() || !report.culprit || !report.culprit->peer_loss) return;
  report.culprit_unknown = true;
  report.victims.push_back(std::move(*report.culprit));
  report.culprit.reset();
  report.culprit_reason.clear();
  for (auto& e : report.same_error) report.victims.push_back(std::move(e));
  report.same_error.clear();
  std::sort(report.victims.begin(), report.victims.end(), ended_before);
}

std::string unreadable_ranks(const FirstErrorReport& r) {
  std::vector<int> ranks;
  for (const auto& u : r.unreadable) ranks.push_back(u.rank);
  return (ranks.size() == 1 ? "the log of " : "the logs of ") + ranks_text(ranks);
}

std::string format_unknown(const FirstErrorReport& r) {
  std::string out = "first failure: unknown: " + unreadable_ranks(r) +
                    " could not be read, and every failing rank whose log was read reports a "
                    "lost peer or timeout\n";
  out += "failing ranks whose logs were read (" + std::to_string(r.victims.size()) + "):\n";
  for (const auto& group : group_alike(r.victims)) {
    const RankEnd& v = *group.front();
    out += group.size() == 1 ? "  rank " + std::to_string(v.rank) + " on " + v.host + " "
                             : "  " + alike_prefix(group);
    out += v.how + " at " + records::format_log_time(v.time);
    if (v.evidence) out += (v.peer_loss ? ": reports " : ": ") + v.evidence->text;
    out += "\n";
  }
  return out;
}

std::string format_unreadable(const FirstErrorReport& r) {
  if (r.unreadable.empty()) return "";
  const std::size_t n = r.unreadable.size();
  std::string out =
      std::to_string(n) +
      (n == 1 ? " rank log was skipped: it could" : " rank logs were skipped: they could") +
      " not be read (expected a regular file)" +
      (r.culprit ? "; the culprit is named from the others" : "") + "\n";
  for (const auto& u : r.unreadable) {
    out += "  " + u.path + " (rank " + std::to_string(u.rank) + "): " + u.why + "\n";
  }
  return out;
}

}  // namespace dtrain::report
