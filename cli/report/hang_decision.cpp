#include "report/hang_decision.hpp"

#include <algorithm>
#include <set>

namespace dtrain::report {
namespace {

std::int64_t micros(std::chrono::seconds s) {
  return std::chrono::duration_cast<std::chrono::microseconds>(s).count();
}

// This rank holds the others: they wait in a collective it has not entered (once they have waited
// hang_after), unless it has waited that long itself. Each of its Contexts against the waits of
// the same Context.
std::optional<std::string> culprit_verdict(const WatchView& v) {
  if (v.own_wait && v.now_us - v.own_wait->since_us >= micros(v.hang_after)) return std::nullopt;
  for (std::size_t k = 0; k < v.slots.size(); ++k) {
    std::vector<RankWait> same;
    for (const RankWait& w : v.waits) {
      if (w.slot == static_cast<int>(k)) same.push_back(w);
    }
    if (same.empty()) continue;
    auto verdict = hang_verdict(v.rank, v.host, v.slots[k], v.doing, same, v.now_us,
                                v.able ? std::optional(v.hang_after) : std::nullopt);
    if (verdict) return verdict;
  }
  return std::nullopt;
}

// Every rank waits in one collective: the lowest says so once the first has waited hang_after
// (kCollectGrace more), naming the node cut off as soon as the nodes' probes agree on one (3 nodes
// or more). The node cut off ends its own ranks (each logger there its own, the lowest saying so)
// kCutNodeFirst before the lowest of the other side ends its rank, not at fault, so that its side
// stops waiting.
void judge_all_waiting(const WatchView& v, bool collected, WatchMemory& memory, Decision& d) {
  const std::optional<std::string> all_waiting =
      v.own_wait ? all_waiting_verdict(v.size, v.waits, v.now_us) : std::nullopt;
  if (all_waiting) memory.all_waits = v.waits;
  if (!v.own_wait || memory.all_waits.empty()) return;
  const std::vector<RankWait>& waits = memory.all_waits;
  const std::vector<std::string> hosts = hosts_of(waits);
  const std::optional<std::string> cut = cut_node(hosts, v.reach);
  if (!all_waiting) {
    // Some left their wait since every rank waited: only the cut node's ranks may have.
    if (!cut) return;
    for (const RankWait& w : waits) {
      const auto still = [&](const RankWait& x) {
        return x.rank == w.rank && x.slot == w.slot && x.seq == w.seq;
      };
      if (w.host != *cut && std::none_of(v.waits.begin(), v.waits.end(), still)) return;
    }
  }
  // The lowest waiting rank speaks; once a node is cut off, the lowest of the other side, and on
  // that node its own lowest.
  int lowest = v.size;
  int lowest_here = v.size;
  for (const RankWait& w : waits) {
    if (!cut || w.host != *cut) lowest = std::min(lowest, w.rank);
    if (w.host == v.host) lowest_here = std::min(lowest_here, w.rank);
  }
  if (cut && *cut == v.host && v.abort) {
    d.verdict = cut_node_verdict(waits, v.reach, v.now_us);
    d.action = cut_node_abort(waits, *cut, v.rank, v.host);
    d.say = lowest_here == v.rank;
    d.keep_wait = true;
    return;
  }
  if (lowest != v.rank) return;
  if (!memory.all_waiting_at_us) memory.all_waiting_at_us = v.now_us;
  if (cut) {
    std::optional<std::string> verdict = cut_node_verdict(waits, v.reach, v.now_us);
    if (!v.abort) {
      d.verdict = std::move(verdict);
    } else if (verdict) {
      memory.held = HeldCut{*verdict, cut_node_abort(waits, *cut, v.rank, v.host), *cut, v.now_us};
    }
    return;
  }
  // No node named: with fewer than 3 nodes nothing tells the sides apart; else once every node's
  // record is in, or kReachGrace after every rank was seen waiting.
  if (collected && (hosts.size() < 3 || v.reach.size() >= hosts.size() ||
                    v.now_us - *memory.all_waiting_at_us >= micros(kReachGrace))) {
    d.verdict = all_waiting;
  }
}

// Nobody named a cause kSilentGrace after this rank's wait reached hang_after: the lowest waiting
// rank names the ranks that published nothing (their node stopped answering, or their loggers
// died).
std::optional<std::string> silent_verdict(const WatchView& v,
                                          const std::function<bool()>& hang_log_named) {
  const std::chrono::seconds waited = v.hang_after + kSilentGrace;
  if (!v.own_wait || v.now_us - v.own_wait->since_us < micros(waited)) return std::nullopt;
  std::set<int> waiting;
  for (const RankWait& w : v.waits) waiting.insert(w.rank);
  if (waiting.empty() || *waiting.begin() != v.rank || hang_log_named()) return std::nullopt;
  std::vector<int> missing;
  for (int r = 0; r < v.size; ++r) {
    if (!waiting.contains(r)) missing.push_back(r);
  }
  if (missing.empty()) return std::nullopt;
  return silent_ranks_verdict(missing, v.waits, v.now_us, waited);
}

}  // namespace

std::chrono::seconds publish_after(std::chrono::seconds hang_after) {
  return std::min(hang_after, kLinkCheckAfter);
}

bool read_waits_now(int names, int size, std::int64_t first_seen_us, std::int64_t now_us,
                    std::chrono::seconds hang_after, bool saw_all_waiting) {
  return names >= size || saw_all_waiting ||
         now_us - first_seen_us >= micros(hang_after - publish_after(hang_after));
}

bool every_rank_waits(const WatchView& view) {
  return view.own_wait && all_waiting_verdict(view.size, view.waits, view.now_us);
}

bool link_check_due(const WatchView& view, const WatchMemory& memory) {
  return view.own_wait && (!memory.all_waits.empty() || every_rank_waits(view));
}

Decision decide(const WatchView& view, WatchMemory& memory,
                const std::function<bool()>& hang_log_named) {
  Decision d;
  d.action = "ending rank " + std::to_string(view.rank);
  if (view.waits.empty()) return d;
  std::int64_t earliest = view.waits.front().since_us;
  for (const RankWait& w : view.waits) earliest = std::min(earliest, w.since_us);
  // The waiters publish within a period of one another: the verdict waits kCollectGrace more, so
  // that it names all of them, not the first one.
  const bool collected = view.now_us - earliest >= micros(view.hang_after + kCollectGrace);
  if (collected) d.verdict = culprit_verdict(view);
  if (d.verdict) return d;
  if (memory.held) {
    if (view.now_us - memory.held->at_us >= micros(kCutNodeFirst)) {
      d.verdict = memory.held->verdict;
      d.action = memory.held->action;
      d.cut_host = memory.held->host;
    }
    return d;
  }
  judge_all_waiting(view, collected, memory, d);
  if (!d.verdict && !memory.held) d.verdict = silent_verdict(view, hang_log_named);
  return d;
}

}  // namespace dtrain::report
