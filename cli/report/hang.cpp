#include "report/hang.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "records/log_line.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {
namespace {

std::string describe(const std::string& op, long long bytes) {
  return op + " of " + std::to_string(bytes) + " bytes";
}

std::string when(const std::optional<std::int64_t>& t) {
  return t ? records::format_log_time(*t) : std::string("(no time)");
}

std::string progress_ranks_text(const std::vector<RankProgress>& ranks) {
  std::vector<int> numbers;
  for (const auto& r : ranks) numbers.push_back(r.rank);
  return report::ranks_text(std::move(numbers));
}

nlohmann::json progress_json(const RankProgress& r) {
  const auto t = [](const std::optional<std::int64_t>& v) {
    return v ? nlohmann::json(records::format_log_time(*v)) : nlohmann::json(nullptr);
  };
  return {{"rank", r.rank}, {"host", r.host},          {"entered", r.entered},
          {"op", r.op},     {"bytes", r.bytes},        {"entered_at", t(r.entered_at)},
          {"left", r.left}, {"left_at", t(r.left_at)}, {"last_record", t(r.last_record)}};
}

}  // namespace

void HeartbeatTracker::add_rank(int rank, std::string host) {
  RankProgress& p = ranks_[rank];
  p.rank = rank;
  p.host = std::move(host);
}

void HeartbeatTracker::add(const records::MetricRecord& r) {
  // Resource samples come from the Meter's own thread, which runs on while the training thread
  // hangs: they say the process lived, not that training moved; a binding record, written when the
  // Meter opened, says neither.
  if (r.type == records::RecordType::kResource || r.type == records::RecordType::kBinding) return;
  if (r.attempt < attempt_) return;
  if (r.attempt > attempt_) {
    // A later attempt: what the earlier one reached says nothing about how this one ended.
    for (auto& [rank, p] : ranks_) {
      RankProgress fresh;
      fresh.rank = rank;
      fresh.host = std::move(p.host);
      p = std::move(fresh);
    }
    any_heartbeat_ = false;
    attempt_ = r.attempt;
  }
  RankProgress& p = ranks_[r.rank];
  p.rank = r.rank;
  const std::int64_t t = records::unix_seconds_to_micros(r.time);
  p.last_record = std::max(p.last_record.value_or(t), t);
  if (r.type != records::RecordType::kCollective) return;
  any_heartbeat_ = true;
  if (r.enter && r.seq >= p.entered) {
    p.entered = r.seq;
    p.op = r.op;
    p.bytes = r.bytes;
    p.entered_at = t;
  } else if (!r.enter && r.seq >= p.left) {
    p.left = r.seq;
    p.left_at = t;
  }
  if (!r.enter && r.failed && (p.failed < 0 || r.seq < p.failed)) {
    p.failed = r.seq;
    p.failed_at = t;
  }
}

namespace {

// The first collective that failed, on which ranks, and who reached it only after that.
void find_failed(const HeartbeatTracker& tracker, HangReport& report) {
  std::optional<long long> seq;
  for (const auto& [rank, p] : tracker.ranks()) {
    if (p.failed >= 0 && (!seq || p.failed < *seq)) seq = p.failed;
  }
  if (!seq) return;
  std::optional<std::int64_t> first_failure;
  for (const auto& [rank, p] : tracker.ranks()) {
    if (p.failed != *seq) continue;
    if (p.failed_at) first_failure = std::min(first_failure.value_or(*p.failed_at), *p.failed_at);
    if (report.failed_what.empty() && p.entered == *seq)
      report.failed_what = describe(p.op, p.bytes);
  }
  report.failed_seq = seq;
  if (report.failed_what.empty()) report.failed_what = "collective #" + std::to_string(*seq);
  for (const auto& [rank, p] : tracker.ranks()) {
    // Only the latest entry's time is kept: entering exactly #seq after the first failure of it
    // is arriving late; never entering it is later still. A late rank usually fails #seq too (a
    // stopped rank the launcher woke finds its peers gone): that failure is what its lateness
    // caused, written after the others gave up, so it counts as late, not as one of those that
    // failed waiting (the heartbeats outrank whatever a rank says after the launcher acted).
    const bool late = p.entered < *seq || (p.entered == *seq && first_failure && p.entered_at &&
                                           *p.entered_at > *first_failure);
    if (late)
      report.late.push_back(p);
    else if (p.failed == *seq)
      report.failed.push_back(p);
  }
}

}  // namespace

HangReport detect_hang(const HeartbeatTracker& tracker) {
  HangReport report;
  report.heartbeats = tracker.any_heartbeat();
  report.ranks = static_cast<int>(tracker.ranks().size());
  if (!report.heartbeats) return report;
  long long lowest = -1;
  bool first = true;
  for (const auto& [rank, p] : tracker.ranks()) {
    report.highest_seq = std::max(report.highest_seq, p.entered);
    lowest = first ? p.entered : std::min(lowest, p.entered);
    first = false;
  }
  if (lowest < report.highest_seq) {
    // The lowest collective someone is missing: ranks at `lowest` never entered lowest + 1.
    const long long k = lowest + 1;
    report.missed_seq = k;
    for (const auto& [rank, p] : tracker.ranks()) {
      if (p.entered < k) {
        report.never_entered.push_back(p);
      } else {
        report.reached.push_back(p);
        if (p.entered == k && report.missed_what.empty())
          report.missed_what = describe(p.op, p.bytes);
      }
    }
    if (report.missed_what.empty()) report.missed_what = "a later collective";
  }
  for (const auto& [rank, p] : tracker.ranks()) {
    if (p.entered > p.left) report.stuck.push_back(p);
  }
  // Ranks at the same # should call the same operation on the same size.
  std::map<long long, std::vector<const RankProgress*>> at;
  for (const auto& [rank, p] : tracker.ranks()) {
    if (p.entered >= 0) at[p.entered].push_back(&p);
  }
  for (const auto& [seq, ps] : at) {
    const bool differ = std::any_of(ps.begin(), ps.end(), [&](const RankProgress* p) {
      return p->op != ps.front()->op || p->bytes != ps.front()->bytes;
    });
    if (differ) {
      for (const RankProgress* p : ps) report.mismatched.push_back(*p);
    }
  }
  find_failed(tracker, report);
  return report;
}

std::string format_hang(const HangReport& r) {
  if (!r.heartbeats) {
    return "no collective heartbeats in the metric records (schema v2 \"coll\" records); "
           "nothing to say about a hang\n";
  }
  std::string out;
  if (r.missed_seq) {
    out += "hang: " + progress_ranks_text(r.never_entered) + " never entered collective #" +
           std::to_string(*r.missed_seq) + " (" + r.missed_what + ") that " +
           progress_ranks_text(r.reached) + " reached\n";
    out += "  never entered #" + std::to_string(*r.missed_seq) + ":\n";
    for (const auto& p : r.never_entered) {
      out += "    rank " + std::to_string(p.rank) + " on " + p.host + ": ";
      if (p.entered < 0)
        out += "entered no collective";
      else
        out += "last entered #" + std::to_string(p.entered) + " at " + when(p.entered_at) +
               (p.left >= p.entered ? ", left it at " + when(p.left_at) : ", never left it");
      out += "; last record at " + when(p.last_record) + "\n";
    }
    out += "  reached #" + std::to_string(*r.missed_seq) + ":\n";
    for (const auto& p : r.reached) {
      out += "    rank " + std::to_string(p.rank) + " on " + p.host + ": entered #" +
             std::to_string(p.entered) + " at " + when(p.entered_at) +
             (p.left >= p.entered ? ", left it at " + when(p.left_at) : ", never left it") + "\n";
    }
  } else if (!r.stuck.empty()) {
    out += "hang: every rank entered collective #" + std::to_string(r.highest_seq) + "; " +
           progress_ranks_text(r.stuck) + " never left it\n";
    for (const auto& p : r.stuck) {
      out += "    rank " + std::to_string(p.rank) + " on " + p.host + ": entered #" +
             std::to_string(p.entered) + " (" + describe(p.op, p.bytes) + ") at " +
             when(p.entered_at) + "\n";
    }
  } else if (r.failed_seq && !r.late.empty()) {
    out += "hang: " + progress_ranks_text(r.late) + " entered collective #" +
           std::to_string(*r.failed_seq) + " (" + r.failed_what + ") only after it had failed on " +
           progress_ranks_text(r.failed) + ", which waited for " +
           (r.late.size() == 1 ? "it" : "them") + "\n";
  } else {
    out += "no hang: all " + std::to_string(r.ranks) + " ranks entered and left collective #" +
           std::to_string(r.highest_seq) + "\n";
  }
  if (r.failed_seq) {
    out += "failed: collective #" + std::to_string(*r.failed_seq) + " (" + r.failed_what +
           ") failed on " + progress_ranks_text(r.failed);
    if (!r.late.empty()) {
      out += "; " + progress_ranks_text(r.late) +
             " had not entered it when it failed there (stopped or slow: they kept the others "
             "waiting)";
    }
    out += "\n";
    for (const auto& p : r.failed) {
      out += "    rank " + std::to_string(p.rank) + " on " + p.host + ": failed at " +
             when(p.failed_at) + "\n";
    }
    for (const auto& p : r.late) {
      out += "    rank " + std::to_string(p.rank) + " on " + p.host + ": ";
      out += p.entered == *r.failed_seq
                 ? "entered it only at " + when(p.entered_at)
                 : "never entered it (last entered #" + std::to_string(p.entered) + ")";
      out += "\n";
    }
  }
  if (!r.mismatched.empty()) {
    out += "mismatch: ranks at the same collective # call different operations:\n";
    for (const auto& p : r.mismatched) {
      out += "    rank " + std::to_string(p.rank) + " #" + std::to_string(p.entered) + ": " +
             describe(p.op, p.bytes) + "\n";
    }
  }
  return out;
}

nlohmann::json hang_to_json(const HangReport& r) {
  const auto list = [](const std::vector<RankProgress>& ps) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : ps) a.push_back(progress_json(p));
    return a;
  };
  return {{"heartbeats", r.heartbeats},
          {"ranks", r.ranks},
          {"highest_seq", r.highest_seq},
          {"missed_seq", r.missed_seq ? nlohmann::json(*r.missed_seq) : nlohmann::json(nullptr)},
          {"missed_what", r.missed_what},
          {"never_entered", list(r.never_entered)},
          {"reached", list(r.reached)},
          {"stuck", list(r.stuck)},
          {"mismatched", list(r.mismatched)},
          {"failed_seq", r.failed_seq ? nlohmann::json(*r.failed_seq) : nlohmann::json(nullptr)},
          {"failed_what", r.failed_what},
          {"failed", list(r.failed)},
          {"late", list(r.late)}};
}

}  // namespace dtrain::report
