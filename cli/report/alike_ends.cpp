#include "report/alike_ends.hpp"

#include <map>
#include <set>

#include "report/log_collapse.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {

std::vector<std::vector<const RankEnd*>> group_alike(const std::vector<RankEnd>& ends) {
  std::vector<std::vector<const RankEnd*>> groups;
  std::map<std::string, std::size_t> by_end;
  for (const auto& e : ends) {
    const std::string key = e.how + (e.peer_loss ? "\n1" : "\n0") +
                            (e.evidence ? "\n" + e.evidence->text : std::string());
    auto [it, added] = by_end.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(&e);
  }
  return groups;
}

namespace {

std::vector<int> ranks_of(const std::vector<const RankEnd*>& group) {
  std::vector<int> ranks;
  for (const RankEnd* e : group) ranks.push_back(e->rank);
  return ranks;
}

std::set<std::string> hosts_of(const std::vector<const RankEnd*>& group) {
  std::set<std::string> hosts;
  for (const RankEnd* e : group) hosts.insert(e->host);
  return hosts;
}

}  // namespace

std::string alike_prefix(const std::vector<const RankEnd*>& group) {
  return collapsed_prefix(ranks_of(group), hosts_of(group), static_cast<long long>(group.size()));
}

std::string alike_ranks(const std::vector<const RankEnd*>& group) {
  return ranks_text(ranks_of(group));
}

std::string alike_hosts(const std::vector<const RankEnd*>& group) {
  return hosts_text(hosts_of(group));
}

}  // namespace dtrain::report
