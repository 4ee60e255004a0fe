#include "report/node_reach.hpp"

#include <algorithm>

#include "report/natural_order.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {
namespace {

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string text;
  for (const std::string& item : items) {
    if (!text.empty()) text += separator;
    text += item;
  }
  return text;
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    if (comma != 0) items.emplace_back(text.substr(0, comma));
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
  }
  return items;
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

const NodeReach* record_of(const std::vector<NodeReach>& reach, const std::string& host) {
  const auto it =
      std::find_if(reach.begin(), reach.end(), [&](const NodeReach& r) { return r.host == host; });
  return it == reach.end() ? nullptr : &*it;
}

}  // namespace

std::string format_reach(const NodeReach& reach) {
  return "reach host=" + reach.host + " answered=" + join(reach.answered, ",") +
         " silent=" + join(reach.silent, ",") + "\n";
}

std::optional<NodeReach> parse_reach(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  constexpr std::string_view kHead = "reach ";
  if (!line.starts_with(kHead)) return std::nullopt;
  line.remove_prefix(kHead.size());
  NodeReach r;
  bool answered = false;
  bool silent = false;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    const std::string_view field = line.substr(0, space);
    line.remove_prefix(space == std::string_view::npos ? line.size() : space + 1);
    const std::size_t eq = field.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = field.substr(0, eq);
    const std::string_view value = field.substr(eq + 1);
    if (key == "host") {
      r.host = value;
    } else if (key == "answered") {
      r.answered = split_commas(value);
      answered = true;
    } else if (key == "silent") {
      r.silent = split_commas(value);
      silent = true;
    }  // else a field of a later version
  }
  if (r.host.empty() || !answered || !silent) return std::nullopt;
  return r;
}

std::vector<std::string> hosts_of(const std::vector<RankWait>& waits) {
  std::vector<std::string> hosts;
  for (const RankWait& w : waits) {
    if (!contains(hosts, w.host)) hosts.push_back(w.host);
  }
  return hosts;
}

std::optional<std::string> cut_node(const std::vector<std::string>& hosts,
                                    const std::vector<NodeReach>& reach) {
  if (hosts.size() < 3) return std::nullopt;
  std::optional<std::string> found;
  for (const std::string& candidate : hosts) {
    bool cut = true;
    for (const std::string& other : hosts) {
      if (other == candidate) continue;
      const NodeReach* r = record_of(reach, other);
      // Every other node probed, found the candidate silent and answered by all the rest.
      if (r == nullptr || !contains(r->silent, candidate) || contains(r->answered, candidate)) {
        cut = false;
        break;
      }
      for (const std::string& third : hosts) {
        if (third != candidate && third != other && !contains(r->answered, third)) cut = false;
      }
      if (!cut) break;
    }
    if (!cut) continue;
    if (found) return std::nullopt;  // not one node (cannot happen with whole records)
    found = candidate;
  }
  return found;
}

std::optional<std::string> cut_node_verdict(const std::vector<RankWait>& waits,
                                            const std::vector<NodeReach>& reach,
                                            std::int64_t now_us) {
  if (waits.empty()) return std::nullopt;
  const std::vector<std::string> hosts = hosts_of(waits);
  const std::optional<std::string> cut = cut_node(hosts, reach);
  if (!cut) return std::nullopt;
  std::vector<int> its_ranks;
  std::vector<int> all;
  for (const RankWait& w : waits) {
    if (w.host == *cut) its_ranks.push_back(w.rank);
    all.push_back(w.rank);
  }
  std::vector<std::string> others;
  for (const std::string& h : hosts) {
    if (h != *cut) others.push_back(h);
  }
  std::sort(others.begin(), others.end(), NaturalLess{});
  // A thousand nodes are a count, not a list.
  constexpr std::size_t kListed = 4;
  const std::string who = others.size() <= kListed ? "nodes " + join(others, ", ")
                                                   : std::to_string(others.size()) + " other nodes";
  std::string own;
  if (const NodeReach* r = record_of(reach, *cut); r == nullptr) {
    own = "it wrote no answer of its own: its link is cut, or it is down";
  } else if (r->answered.empty()) {
    own = "it reaches none of them: its link is cut";
  } else {
    own = "though it reaches " + std::to_string(r->answered.size()) + " of them: a one-way fault";
  }
  return "dtrain: hang: node " + *cut + " (" + ranks_text(std::move(its_ranks)) +
         ") stopped answering: " + who + " cannot reach it and reach each other (" + own + "); " +
         ranks_text(std::move(all)) + " wait " + waiting_where(waits, now_us);
}

std::string cut_node_abort(const std::vector<RankWait>& waits, const std::string& cut_host,
                           int own_rank, const std::string& own_host) {
  std::vector<int> its_ranks;
  for (const RankWait& w : waits) {
    if (w.host == cut_host) its_ranks.push_back(w.rank);
  }
  const std::string cut = ranks_text(std::move(its_ranks)) + " on " + cut_host;
  if (own_host == cut_host) return "ending " + cut + ", the node cut off";
  return "ending " + cut + " (their loggers there) and rank " + std::to_string(own_rank) + " on " +
         own_host + ", not at fault: the ranks on this side of the cut would not learn of " +
         cut_host + "'s end";
}

}  // namespace dtrain::report
