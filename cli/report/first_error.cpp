#include "report/first_error.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "common/alarm_datagram.hpp"
#include "records/log_line.hpp"
#include "report/alike_ends.hpp"
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

// The signals a launcher or scheduler stops a job with (Open MPI, Slurm and PBS send SIGTERM,
// then SIGKILL to the whole process, which leaves no exit line).
bool stopped_by_launcher(int signal) {
  return signal == 15 /*SIGTERM*/ || signal == 2 /*SIGINT*/ || signal == 1 /*SIGHUP*/;
}

}  // namespace

bool ended_before(const RankEnd& a, const RankEnd& b) {
  return a.time < b.time || (a.time == b.time && a.rank < b.rank);
}

std::optional<MissedCollective> missed_collective(const HangReport& hang) {
  if (hang.missed_seq) {
    MissedCollective missed{*hang.missed_seq, hang.missed_what, {}, false};
    for (const auto& p : hang.never_entered) missed.ranks.push_back(p.rank);
    return missed;
  }
  if (hang.failed_seq && !hang.late.empty()) {
    MissedCollective missed{*hang.failed_seq, hang.failed_what, {}, true};
    for (const auto& p : hang.late) missed.ranks.push_back(p.rank);
    return missed;
  }
  return std::nullopt;
}

namespace {

// A rank that did not finish cleanly, with the scan it came from.
struct Failing {
  RankEnd end;
  const RankLogScan* scan;
};

bool in_missed(const std::optional<MissedCollective>& missed, int rank) {
  return missed && std::count(missed->ranks.begin(), missed->ranks.end(), rank) > 0;
}

// The rank a line of `scan`'s names as lost in libdtrain's words ("peer process lost: rank 3"),
// when it is another rank.
std::optional<int> lost_peer_named(const RankLogScan& scan) {
  if (!scan.lost_peer()) return std::nullopt;
  const auto peer = parse_lost_peer_text(scan.lost_peer()->text);
  if (!peer || peer->lost == scan.rank()) return std::nullopt;
  return peer->lost;
}

// Sorts every rank into finished, still running or failing (with how and when it ended). A rank
// with no exit line is still running only while no rank has ended or named a lost peer and the
// job is not known to have ended (`job_ended`: submit recorded its walltime, whose SIGKILL can
// take every rank's logger before its exit line; Open MPI's abort has Slurm end the step as fast).
std::vector<Failing> classify_ends(const std::vector<RankLogScan>& scans,
                                   const std::vector<std::optional<std::int64_t>>& last_metric_time,
                                   const std::optional<MissedCollective>& missed, bool job_ended,
                                   FirstErrorReport& report) {
  const bool any_exit = std::any_of(scans.begin(), scans.end(), [](const RankLogScan& s) {
    return s.exit().has_value() || lost_peer_named(s).has_value();
  });
  std::vector<Failing> failing;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    const RankLogScan& s = scans[i];
    RankEnd end;
    end.rank = s.rank();
    if (s.start()) end.host = s.start()->host;
    end.last_lines = s.last_lines();
    if (s.exit() && !s.exit()->failed()) {
      report.finished.push_back(s.rank());
      continue;
    }
    if (s.exit()) {
      end.kind = RankEnd::Kind::kFailed;
      end.time = *s.exit_time();
      end.how = records::describe_exit(*s.exit());
    } else {
      std::optional<std::int64_t> alive = s.last_time();
      if (i < last_metric_time.size() && last_metric_time[i]) {
        alive = std::max(alive.value_or(*last_metric_time[i]), *last_metric_time[i]);
      }
      if (!any_exit && !job_ended && !in_missed(missed, s.rank())) {
        report.running.push_back(s.rank());
        continue;
      }
      end.kind = RankEnd::Kind::kSilent;
      end.time = alive.value_or(0);
      end.how = "went silent (its log has no exit line from dtrain run-rank)";
    }
    if (s.first_error()) end.evidence = s.first_error();
    failing.push_back({std::move(end), &s});
  }
  return failing;
}

// A rank blames a peer when it reports a lost peer, a watchdog or a timeout after another rank
// had already failed or gone quiet (a victim reports what happened to the culprit).
void mark_peer_blame(std::vector<Failing>& failing) {
  for (std::size_t i = 0; i < failing.size(); ++i) {
    std::optional<std::int64_t> others_first;
    for (std::size_t j = 0; j < failing.size(); ++j) {
      if (j != i) {
        others_first = std::min(others_first.value_or(failing[j].end.time), failing[j].end.time);
      }
    }
    const auto& loss = failing[i].scan->last_peer_loss();
    if (loss && others_first && loss->time >= *others_first) {
      failing[i].end.peer_loss = true;
      failing[i].end.evidence = loss;
    }
    // A collective that names the ranks it waited for is evidence by itself: the named rank may
    // well end after this one (a stopped rank that is woken, then killed, exits last).
    const auto& named = failing[i].scan->missing_ranks();
    const int self = failing[i].end.rank;
    if (std::any_of(named.begin(), named.end(), [self](int r) { return r != self; })) {
      failing[i].end.peer_loss = true;
      failing[i].end.evidence = failing[i].scan->missing_line();
    } else if (!failing[i].end.peer_loss && lost_peer_named(*failing[i].scan)) {
      // So is a line naming the lost peer (when no later peer-loss line is the evidence already).
      failing[i].end.peer_loss = true;
      failing[i].end.evidence = failing[i].scan->lost_peer();
    }
  }
}

// The failing ranks that the others' "missing ranks" errors name most often (rank 0 may say
// "missing ranks: 1, 2" while rank 2, itself waiting on rank 1, says "missing ranks: 1").
std::vector<const Failing*> named_missing(const std::vector<Failing>& failing) {
  std::map<int, int> votes;
  for (const auto& f : failing) {
    for (int r : f.scan->missing_ranks()) {
      if (r != f.end.rank) ++votes[r];
    }
  }
  int most = 0;
  for (const auto& [rank, n] : votes) most = std::max(most, n);
  std::vector<const Failing*> out;
  for (const auto& f : failing) {
    const auto it = votes.find(f.end.rank);
    if (most > 0 && it != votes.end() && it->second == most) out.push_back(&f);
  }
  if (out.size() < 2) return out;
  // A tie (two ranks, each naming the other): the earliest report is the one a waiting rank made;
  // the later one came from the rank that arrived late and found its peers gone.
  const Failing* first = nullptr;
  for (const auto& f : failing) {
    const auto& line = f.scan->missing_line();
    if (line && (first == nullptr || line->time < first->scan->missing_line()->time)) first = &f;
  }
  const auto& named = first->scan->missing_ranks();
  std::erase_if(out, [&](const Failing* f) {
    return std::find(named.begin(), named.end(), f->end.rank) == named.end();
  });
  return out;
}

// The failing ranks that the others' lost-peer lines name most often ("peer process lost: rank 3
// (on node2) ...": libdtrain's, their loggers' or the note written after the launch ended); ties
// go to the rank named earliest.
std::vector<const Failing*> named_lost(const std::vector<Failing>& failing) {
  std::map<int, int> votes;
  std::map<int, std::int64_t> first_named;
  for (const auto& f : failing) {
    if (const auto r = lost_peer_named(*f.scan)) {
      ++votes[*r];
      const std::int64_t t = f.scan->lost_peer()->time;
      first_named[*r] = first_named.count(*r) ? std::min(first_named[*r], t) : t;
    }
  }
  const Failing* best = nullptr;
  for (const auto& f : failing) {
    const auto it = votes.find(f.end.rank);
    if (it == votes.end()) continue;
    if (best == nullptr || it->second > votes[best->end.rank] ||
        (it->second == votes[best->end.rank] &&
         first_named[f.end.rank] < first_named[best->end.rank])) {
      best = &f;
    }
  }
  if (best == nullptr) return {};
  return {best};
}

// Candidates for the culprit, strongest evidence first: ranks that never reached a collective
// the others entered; else the ranks the others' "missing ranks" errors name (named_missing);
// else the rank their lost-peer lines name (named_lost: the launcher may have ended every rank,
// logger and all, so no exit line tells who ended first);
// else ranks that failed on their own and do not blame a peer; else ranks
// that do not blame a peer; else everyone who failed (`all_blame_peers`). "On their own" is a
// non-zero status or a signal other than the ones launchers and schedulers stop jobs with: a
// silent rank's time is only its last line, which for a rank that was merely waiting can precede
// the real failure. The earliest candidate is the culprit.
const Failing& pick_culprit(const std::vector<Failing>& failing,
                            const std::optional<MissedCollective>& missed, bool& all_blame_peers) {
  std::vector<const Failing*> candidates;
  for (const auto& f : failing) {
    if (in_missed(missed, f.end.rank)) candidates.push_back(&f);
  }
  if (candidates.empty()) candidates = named_missing(failing);
  if (candidates.empty()) candidates = named_lost(failing);
  if (candidates.empty()) {
    for (const auto& f : failing) {
      const auto& exit = f.scan->exit();
      const bool own = exit && (exit->signal == 0 || !stopped_by_launcher(exit->signal));
      if (own && !f.end.peer_loss) candidates.push_back(&f);
    }
  }
  if (candidates.empty()) {
    for (const auto& f : failing)
      if (!f.end.peer_loss) candidates.push_back(&f);
  }
  all_blame_peers = candidates.empty();
  if (all_blame_peers) {
    for (const auto& f : failing) candidates.push_back(&f);
  }
  return **std::min_element(candidates.begin(), candidates.end(),
                            [](const Failing* a, const Failing* b) {
                              return a->end.time < b->end.time ||
                                     (a->end.time == b->end.time && a->end.rank < b->end.rank);
                            });
}

// A job stopped from outside (its walltime reached, cancelled): every failing rank was ended by
// a signal launchers and schedulers stop jobs with, and no heartbeat shows a rank that fell
// behind. Then no rank is to blame.
bool stopped_from_outside(const std::vector<Failing>& failing,
                          const std::optional<MissedCollective>& missed) {
  if (missed && !missed->ranks.empty()) return false;
  return std::all_of(failing.begin(), failing.end(), [](const Failing& f) {
    const auto& exit = f.scan->exit();
    return exit && exit->signal != 0 && stopped_by_launcher(exit->signal);
  });
}

// Ranks that failed on their own, do not blame a peer, and quote the culprit's error line: each
// hit the same fault by itself (a bad input every rank reads), so each is a culprit too.
bool same_error_on_its_own(const Failing& f, const RankEnd& culprit) {
  const auto& exit = f.scan->exit();
  const bool own = exit && (exit->signal == 0 || !stopped_by_launcher(exit->signal));
  return own && !f.end.peer_loss && f.end.evidence && culprit.evidence &&
         f.end.evidence->text == culprit.evidence->text;
}

}  // namespace

FirstErrorReport find_first_error(const std::vector<RankLogScan>& scans,
                                  const std::vector<std::optional<std::int64_t>>& last_metric_time,
                                  const std::optional<MissedCollective>& missed,
                                  bool walltime_reached) {
  FirstErrorReport report;
  report.walltime_reached = walltime_reached;
  report.ranks = static_cast<int>(scans.size());
  std::vector<Failing> failing =
      classify_ends(scans, last_metric_time, missed, walltime_reached, report);
  if (failing.empty()) return report;
  mark_peer_blame(failing);
  if (walltime_reached || stopped_from_outside(failing, missed)) {
    for (auto& f : failing) report.stopped.push_back(std::move(f.end));
    std::sort(report.stopped.begin(), report.stopped.end(), ended_before);
    return report;
  }

  bool all_blame_peers = false;
  const RankEnd& culprit = pick_culprit(failing, missed, all_blame_peers).end;
  report.culprit = culprit;
  if (in_missed(missed, culprit.rank)) {
    report.culprit_reason =
        missed->late ? "entered collective #" + std::to_string(missed->seq) + " (" + missed->what +
                           ") only after it had failed on the ranks that waited for it"
                     : "never entered collective #" + std::to_string(missed->seq) + " (" +
                           missed->what + ") that the other ranks entered";
  } else if (const auto named = named_missing(failing);
             std::any_of(named.begin(), named.end(),
                         [&](const Failing* f) { return f->end.rank == culprit.rank; })) {
    report.culprit_reason = "the other failing ranks' errors name it as missing";
  } else if (const auto lost = named_lost(failing);
             !lost.empty() && lost.front()->end.rank == culprit.rank) {
    report.culprit_reason = "the other failing ranks' logs name it as the lost peer";
  } else if (culprit.kind == RankEnd::Kind::kSilent) {
    report.culprit_reason = "went silent first";
  } else {
    report.culprit_reason = "exited first";
  }
  if (all_blame_peers && failing.size() > 1) {
    report.culprit_reason +=
        "; every failing rank reports a lost peer or timeout, so the earliest is named";
  }
  const int culprit_rank = culprit.rank;
  for (auto& f : failing) {
    if (f.end.rank == culprit_rank) continue;
    auto& list = same_error_on_its_own(f, *report.culprit) ? report.same_error : report.victims;
    list.push_back(std::move(f.end));
  }
  std::sort(report.same_error.begin(), report.same_error.end(), ended_before);
  std::sort(report.victims.begin(), report.victims.end(), ended_before);
  return report;
}

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
    out += "  first error line (" + records::format_log_time(c.evidence->time) +
           "): " + c.evidence->text + "\n";
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
    out = "ranks " + std::to_string(c.rank);
    for (const auto& e : r.same_error) out += ", " + std::to_string(e.rank);
    out += " failed on their own with the same error; rank " + std::to_string(c.rank) + " on " +
           c.host + " first " + c.how;
  }
  if (c.evidence) out += (c.peer_loss ? ": reports " : ": ") + c.evidence->text;
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
