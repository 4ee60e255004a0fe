// The texts of a FirstErrorReport (first_error.hpp): `dtrain logs --first-error`'s report, the
// one-line verdict `dtrain submit` and the report page print, and the JSON of `--json`. Kept apart
// from the analysis, which decides; this file only words what it decided.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/words.hpp"
#include "records/log_line.hpp"
#include "report/alike_ends.hpp"
#include "report/first_error.hpp"
#include "report/rank_ranges.hpp"
#include "report/unreadable_logs.hpp"

namespace dtrain::report {
namespace {

const char* kind_name(RankEnd::Kind kind) {
  switch (kind) {
    case RankEnd::Kind::kFinished:
      return "finished";
    case RankEnd::Kind::kFailed:
      return "failed";
    case RankEnd::Kind::kSilent:
      return "silent";
    case RankEnd::Kind::kRunning:
      return "running";
  }
  return "?";
}

// The culprit is chosen by the strength of its evidence, not by time, so a victim may have ended
// before it (a rank that was only waiting and went silent at its last line): such a victim is
// "earlier", never a negative "later".
std::string seconds_from(std::int64_t time, std::int64_t reference) {
  const std::int64_t d = time - reference;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f s %s", static_cast<double>(d < 0 ? -d : d) / 1e6,
                d < 0 ? "earlier" : "later");
  return buf;
}

}  // namespace

namespace {

std::string format_stopped(const FirstErrorReport& r) {
  const std::size_t n = r.stopped.size();
  std::string out =
      "no rank failed on its own: " + std::to_string(n) + " of " + std::to_string(r.ranks) +
      " ranks " + (n == 1 ? "was" : "were") +
      (r.walltime_reached ? " stopped by the launcher when the job reached its walltime (as "
                            "`dtrain submit` recorded); no rank is blamed\n"
                          : " stopped by the launcher or scheduler (SIGTERM, SIGINT or SIGHUP), as "
                            "when the job reaches its walltime or is cancelled; no rank is "
                            "blamed\n");
  for (const auto& e : r.stopped) {
    out += "  rank " + std::to_string(e.rank) + " on " + e.host + " " + e.how + " at " +
           records::format_log_time(e.time);
    if (!e.last_lines.empty()) out += "; its last line: " + e.last_lines.back();
    out += "\n";
  }
  out += "  (`dtrain logs --hang` tells from the heartbeats whether a rank was stuck)\n";
  if (!r.finished.empty()) {
    out += std::to_string(r.finished.size()) + " rank" + (r.finished.size() == 1 ? "" : "s") +
           " exited with status 0\n";
  }
  return out;
}

std::string format_ends(const FirstErrorReport& r) {
  std::string out;
  if (r.culprit_unknown) return format_unknown(r);
  if (!r.culprit && !r.stopped.empty()) return format_stopped(r);
  if (!r.culprit) {
    out += "no rank failed: " + std::to_string(r.finished.size()) + " of " +
           std::to_string(r.ranks) + " ranks exited with status 0";
    if (!r.running.empty()) {
      out += ", " + std::to_string(r.running.size()) + " have no exit line yet (still running?)";
    }
    out += "\n";
    return out;
  }
  const RankEnd& c = *r.culprit;
  out += "first failure: rank " + std::to_string(c.rank) + " on " + c.host + " " + c.how + " at " +
         records::format_log_time(c.time) + "\n";
  out += "  culprit: " + r.culprit_reason + "\n";
  if (c.evidence) {
    out += (r.culprit_error_after_others
                ? "  its error once the others had given up on it (it names them, not the cause) ("
                : "  first error line (") +
           records::format_log_time(c.evidence->time) + "): " + c.evidence->text + "\n";
  }
  out += "  last lines of rank " + std::to_string(c.rank) + ":\n";
  for (const auto& l : c.last_lines) out += "    " + l + "\n";
  if (c.last_lines.empty()) out += "    (none)\n";
  if (!r.same_error.empty()) {
    out += "also culprits (" + std::to_string(r.same_error.size()) +
           (r.same_error.size() == 1 ? " rank failed on its own" : " ranks failed on their own") +
           " with the same error line):\n";
    for (const auto& e : r.same_error) {
      out += "  rank " + std::to_string(e.rank) + " on " + e.host + " " + e.how + " at " +
             records::format_log_time(e.time) + " (" + seconds_from(e.time, c.time) + ")\n";
    }
  }
  if (!r.victims.empty()) {
    const std::size_t n = r.victims.size();
    const bool all_after = std::all_of(r.victims.begin(), r.victims.end(),
                                       [&](const RankEnd& v) { return v.time >= c.time; });
    out += "victims (" + std::to_string(n) +
           (all_after ? (n == 1 ? " rank failed after rank " : " ranks failed after rank ") +
                            std::to_string(c.rank)
                      : (n == 1 ? " other failing rank; rank " : " other failing ranks; rank ") +
                            std::to_string(c.rank) + " is the culprit") +
           "):\n";
    // Victims that ended alike (1,023 ranks SIGTERMed by the launcher) are one line.
    for (const auto& group : group_alike(r.victims)) {
      const RankEnd& v = *group.front();
      const RankEnd& last = *group.back();
      out += group.size() == 1 ? "  rank " + std::to_string(v.rank) + " on " + v.host + " "
                               : "  " + alike_prefix(group);
      out += v.how + " at " + records::format_log_time(v.time) + " (" +
             seconds_from(v.time, c.time) +
             (last.time == v.time ? ")"
                                  : "; the last at " + records::format_log_time(last.time) + ", " +
                                        seconds_from(last.time, c.time) + ")");
      if (v.evidence) out += (v.peer_loss ? ": reports " : ": ") + v.evidence->text;
      out += "\n";
    }
  }
  if (!r.finished.empty()) {
    out += std::to_string(r.finished.size()) + " rank" + (r.finished.size() == 1 ? "" : "s") +
           " exited with status 0\n";
  }
  return out;
}

}  // namespace

std::string format_first_error(const FirstErrorReport& r) {
  return format_ends(r) + format_unreadable(r);
}

std::string summarize_first_error(const FirstErrorReport& r) {
  if (r.culprit_unknown) {
    return "culprit unknown: " + unreadable_ranks(r) + " could not be read (" +
           r.unreadable.front().why + (r.unreadable.size() > 1 ? ", ..." : "") +
           "), and the ranks whose logs were read report a lost peer or timeout";
  }
  if (!r.culprit && !r.stopped.empty()) {
    return "no rank failed on its own; " + std::to_string(r.stopped.size()) +
           (r.stopped.size() == 1 ? " rank was" : " ranks were") +
           (r.walltime_reached ? " stopped at the job's walltime"
                               : " stopped by the launcher or scheduler (walltime reached or job "
                                 "cancelled)");
  }
  if (!r.culprit) return "";
  const RankEnd& c = *r.culprit;
  std::string out;
  if (r.same_error.empty()) {
    out = "rank " + std::to_string(c.rank) + " on " + c.host + " " + c.how;
  } else {
    std::vector<int> ranks = {c.rank};
    for (const auto& e : r.same_error) ranks.push_back(e.rank);
    out = "ranks " + join_ranks(ranks) + " failed on their own with the same error; rank " +
          std::to_string(c.rank) + " on " + c.host + " first " + c.how;
  }
  if (r.culprit_error_after_others) {
    out += ": " + r.culprit_reason;  // its own error names the ranks that waited for it
  } else if (c.evidence) {
    out += (c.peer_loss ? ": reports " : ": ") + c.evidence->text;
  }
  return out;
}

nlohmann::json first_error_to_json(const FirstErrorReport& r) {
  const auto end_json = [](const RankEnd& e) {
    nlohmann::json j = {{"rank", e.rank},
                        {"host", e.host},
                        {"state", kind_name(e.kind)},
                        {"time", records::format_log_time(e.time)},
                        {"how", e.how},
                        {"reports_peer_loss", e.peer_loss},
                        {"last_lines", e.last_lines}};
    if (e.evidence) {
      j["evidence"] = {{"time", records::format_log_time(e.evidence->time)},
                       {"text", e.evidence->text}};
    }
    return j;
  };
  nlohmann::json out = {{"ranks", r.ranks}, {"finished", r.finished}, {"running", r.running}};
  out["culprit"] = nullptr;
  if (r.culprit) {
    out["culprit"] = end_json(*r.culprit);
    out["culprit"]["reason"] = r.culprit_reason;
    out["culprit"]["error_after_others"] = r.culprit_error_after_others;
  }
  out["same_error"] = nlohmann::json::array();
  for (const auto& e : r.same_error) out["same_error"].push_back(end_json(e));
  out["victims"] = nlohmann::json::array();
  for (const auto& v : r.victims) out["victims"].push_back(end_json(v));
  out["stopped"] = nlohmann::json::array();
  for (const auto& e : r.stopped) out["stopped"].push_back(end_json(e));
  out["walltime_reached"] = r.walltime_reached;
  out["culprit_unknown"] = r.culprit_unknown;
  out["unreadable"] = nlohmann::json::array();
  for (const auto& u : r.unreadable) {
    out["unreadable"].push_back({{"rank", u.rank}, {"path", u.path}, {"why", u.why}});
  }
  return out;
}

}  // namespace dtrain::report
