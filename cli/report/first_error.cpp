#include "report/first_error.hpp"

#include <algorithm>
#include <map>

#include "common/alarm_datagram.hpp"
#include "records/rank_lines.hpp"

namespace dtrain::report {
namespace {

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
  const bool kept_others_waiting =
      in_missed(missed, culprit.rank) ||
      report.culprit_reason == "the other failing ranks' errors name it as missing";
  report.culprit_error_after_others = kept_others_waiting && culprit.peer_loss;
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

}  // namespace dtrain::report
