#include "report/page/stuck_collective.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "records/log_line.hpp"
#include "report/plain_number.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {
namespace {

std::vector<int> numbers(const std::vector<RankProgress>& ranks) {
  std::vector<int> out;
  for (const auto& r : ranks) out.push_back(r.rank);
  return out;
}

// "node1", "node1, node2, node3, node4 and 3 more": each host once, in rank order.
std::string hosts_text(const std::vector<RankProgress>& ranks) {
  constexpr std::size_t kNamed = 4;
  std::vector<std::string> hosts;
  for (const auto& r : ranks) {
    if (std::find(hosts.begin(), hosts.end(), r.host) == hosts.end()) hosts.push_back(r.host);
  }
  std::string out;
  for (std::size_t i = 0; i < std::min(kNamed, hosts.size()); ++i) {
    out += (i == 0 ? "" : ", ") + hosts[i];
  }
  if (hosts.size() > kNamed) out += " and " + std::to_string(hosts.size() - kNamed) + " more";
  return out;
}

}  // namespace

nlohmann::json in_progress_json(const HangReport& hang, std::optional<std::int64_t> now_us) {
  std::vector<RankProgress> in, missing;
  long long seq = 0;
  if (hang.missed_seq) {
    seq = *hang.missed_seq;
    in = hang.reached;
    missing = hang.never_entered;
  } else if (!hang.stuck.empty()) {
    // Every rank entered the latest collective; these have not left it.
    seq = hang.highest_seq;
    for (const auto& p : hang.stuck) {
      if (p.entered == seq) in.push_back(p);
    }
  }
  if (in.empty()) return nullptr;
  // The collective as its first rank in entered it (ranks further on have entered a later one).
  const RankProgress* first = nullptr;
  for (const auto& p : in) {
    if (p.entered != seq || !p.entered_at) continue;
    if (first == nullptr || *p.entered_at < *first->entered_at) first = &p;
  }
  if (first == nullptr) first = &in.front();
  const std::string collective = "#" + std::to_string(seq) + " " + first->op + " of " +
                                 bytes_text(static_cast<double>(first->bytes));
  const std::string at = first->entered_at ? records::format_log_time(*first->entered_at) : "-";
  if (!now_us) {
    for (const auto* ranks : {&in, &missing}) {
      for (const auto& p : *ranks) {
        if (p.last_record) now_us = std::max(now_us.value_or(*p.last_record), *p.last_record);
      }
    }
  }
  std::string waited = "-";
  if (first->entered_at && now_us) {
    waited = duration_text(
        static_cast<double>(std::max<std::int64_t>(0, *now_us - *first->entered_at)) / 1e6);
  }
  const std::string in_text = ranks_text(numbers(in));
  const std::string missing_text = missing.empty() ? "none" : ranks_text(numbers(missing));
  std::string text = collective + ": in progress since " + at + " (" + waited +
                     " before this page was written): " + in_text +
                     (in.size() == 1 ? " is" : " are") + " in it";
  if (!missing.empty()) {
    text += "; " + missing_text + " (on " + hosts_text(missing) + ")" +
            (missing.size() == 1 ? " has" : " have") + " not entered it";
    const RankProgress& m = missing.front();
    if (missing.size() == 1 && m.entered >= 0 && m.left >= m.entered && m.left_at) {
      text += " (it left #" + std::to_string(m.left) + " at " +
              records::format_log_time(*m.left_at) + ")";
    }
  } else {
    // Every rank entered it (none is missing); those not in it have left it.
    text += static_cast<int>(in.size()) == hang.ranks
                ? "; every rank entered it and none has left it"
                : "; the others have left it";
  }
  text += ".";
  const nlohmann::json row = {
      collective + " (in progress)",
      at,
      "in progress for " + waited,
      waited + " so far",
      missing.empty() ? "-" : "not yet: " + missing_text,
      std::to_string(in.size()) + " of " + std::to_string(hang.ranks) + " in"};
  return {{"collective", collective}, {"at", at},     {"waited", waited}, {"in", in_text},
          {"missing", missing_text},  {"text", text}, {"row", row}};
}

}  // namespace dtrain::report
