#include "affinity/affinity.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

namespace dtrain::affinity {
namespace {

// The cores the job may use, each trimmed to its allowed PUs, in topology order.
struct UsableCore {
  int index = 0;  // into Node::cores
  CpuSet pus;
};

std::vector<UsableCore> usable_cores(const Node& node, const CpuSet& allowed) {
  std::vector<UsableCore> out;
  for (std::size_t i = 0; i < node.cores.size(); ++i) {
    CpuSet pus = node.cores[i].pus & allowed;
    if (!pus.empty()) out.push_back({static_cast<int>(i), std::move(pus)});
  }
  return out;
}

std::vector<int> visible_gpus(const Node& node, const Restriction& restriction) {
  const int count = static_cast<int>(node.gpus.size());
  if (!restriction.gpus) {
    std::vector<int> all(node.gpus.size());
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  std::vector<int> out;
  for (int g : *restriction.gpus) {
    if (g < 0 || g >= count) {
      throw PolicyError("dtrain: affinity: allowed GPUs: GPU " + std::to_string(g) + " of " +
                        node.source + " does not exist; expected indices 0-" +
                        std::to_string(count - 1) + " of its " + std::to_string(count) +
                        " GPUs, got " + std::to_string(g));
    }
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  return out;
}

// Position of the first core (topology order) close to `cpus`: orders devices by where they sit
// among the cores, which is how the Polaris "reverse" order falls out of the topology.
int first_core_near(const Node& node, const CpuSet& cpus) {
  for (std::size_t i = 0; i < node.cores.size(); ++i) {
    if (node.cores[i].pus.intersects(cpus)) return static_cast<int>(i);
  }
  return std::numeric_limits<int>::max();
}

// The visible GPUs (as relative indices) in the order ranks take them.
std::vector<int> gpu_order(const Node& node, const std::vector<int>& visible, GpuPolicy policy) {
  std::vector<int> order(visible.size());
  std::iota(order.begin(), order.end(), 0);
  if (policy == GpuPolicy::kClosest) {
    std::vector<int> key(visible.size());
    for (std::size_t i = 0; i < visible.size(); ++i) {
      key[i] = first_core_near(node, node.gpus[static_cast<std::size_t>(visible[i])].locality);
    }
    // Equal keys keep relative (PCI) order: GPUs under one host bridge stay adjacent.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return key[static_cast<std::size_t>(a)] < key[static_cast<std::size_t>(b)];
    });
  }
  return order;
}

void assign_gpus(const std::vector<int>& order, RankMap& map) {
  const std::size_t g = order.size();
  const std::size_t r = map.ranks.size();
  if (g == 0) return;
  for (std::size_t i = 0; i < r; ++i) {
    auto& rank = map.ranks[i];
    if (r >= g) {
      rank.gpus = {order[i % g]};
    } else {
      // Equal groups of adjacent GPUs; the g % r left over stay unused rather than unbalance ranks.
      const std::size_t k = g / r;
      rank.gpus.assign(order.begin() + static_cast<std::ptrdiff_t>(i * k),
                       order.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
      std::sort(rank.gpus.begin(), rank.gpus.end());
    }
    for (int rel : rank.gpus)
      rank.node_gpus.push_back(map.visible_gpus[static_cast<std::size_t>(rel)]);
  }
}

// Ranks without GPUs: spread over the NUMA domains in proportion to their usable cores (each rank
// goes to the domain with the most cores per rank after taking it), in blocks of consecutive ranks.
std::vector<int> spread_over_numa(const Node& node, const std::vector<UsableCore>& cores,
                                  int ranks) {
  std::vector<int> domains;
  std::vector<int> capacity;
  for (const auto& n : node.numa) {
    int c = 0;
    for (const auto& uc : cores)
      c += node.cores[static_cast<std::size_t>(uc.index)].numa == n.os_index;
    if (c > 0) {
      domains.push_back(n.os_index);
      capacity.push_back(c);
    }
  }
  std::vector<int> taken(domains.size(), 0);
  for (int r = 0; r < ranks; ++r) {
    std::size_t best = 0;
    for (std::size_t d = 1; d < domains.size(); ++d) {
      // capacity[d]/(taken[d]+1) > capacity[best]/(taken[best]+1), in integers
      if (static_cast<long>(capacity[d]) * (taken[best] + 1) >
          static_cast<long>(capacity[best]) * (taken[d] + 1)) {
        best = d;
      }
    }
    ++taken[best];
  }
  std::vector<int> out;
  for (std::size_t d = 0; d < domains.size(); ++d)
    out.insert(out.end(), static_cast<std::size_t>(taken[d]), domains[d]);
  return out;
}

// The usable cores (positions into `cores`) around a rank at a widening level:
// 0 = the NUMA domains of its seed, 1 = their packages, 2 = the node.
std::vector<int> home_cores(const Node& node, const std::vector<UsableCore>& cores,
                            const std::vector<int>& seed_numa, int level) {
  std::vector<int> packages;
  for (int n : seed_numa) {
    if (const auto* d = node.find_numa(n)) packages.push_back(d->package);
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    const auto& core = node.cores[static_cast<std::size_t>(cores[i].index)];
    const bool in = level >= 2 ||
                    (level == 1 &&
                     std::find(packages.begin(), packages.end(), core.package) != packages.end()) ||
                    std::find(seed_numa.begin(), seed_numa.end(), core.numa) != seed_numa.end();
    if (in) out.push_back(static_cast<int>(i));
  }
  return out;
}

struct Group {
  std::vector<int> cores;  // positions into the usable cores, ascending
  std::vector<int> ranks;
};

// Ranks whose home cores overlap compete for them, so they form one group.
std::vector<Group> group_ranks(const std::vector<std::vector<int>>& homes) {
  const std::size_t n = homes.size();
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto overlaps = [](const std::vector<int>& a, const std::vector<int>& b) {
    std::vector<int> common;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    return !common.empty();
  };
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      if (find(a) != find(b) && overlaps(homes[a], homes[b])) parent[find(a)] = find(b);
    }
  }
  std::vector<Group> groups;
  std::vector<std::size_t> group_of_root(n, n);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t root = find(r);
    if (group_of_root[root] == n) {
      group_of_root[root] = groups.size();
      groups.emplace_back();
    }
    auto& g = groups[group_of_root[root]];
    g.ranks.push_back(static_cast<int>(r));
    std::vector<int> merged;
    std::set_union(g.cores.begin(), g.cores.end(), homes[r].begin(), homes[r].end(),
                   std::back_inserter(merged));
    g.cores = std::move(merged);
  }
  return groups;
}

void assign_cpus(const Node& node, const std::vector<UsableCore>& cores,
                 const std::vector<int>& gpu_rank_order, RankMap& map) {
  const std::size_t nranks = map.ranks.size();
  // Each rank's seed: the NUMA domains of its GPUs, or a NUMA domain of its own when it has none.
  std::vector<std::vector<int>> seeds(nranks);
  std::vector<int> spread;
  for (std::size_t r = 0; r < nranks; ++r) {
    CpuSet near;
    for (int g : map.ranks[r].node_gpus) near |= node.gpus[static_cast<std::size_t>(g)].locality;
    seeds[r] = node.numa_of(near);
  }
  const bool any_gpu = std::any_of(map.ranks.begin(), map.ranks.end(),
                                   [](const RankAssignment& a) { return !a.gpus.empty(); });
  if (!any_gpu) {
    spread = spread_over_numa(node, cores, static_cast<int>(nranks));
    for (std::size_t r = 0; r < nranks; ++r) seeds[r] = {spread[r]};
  }
  std::vector<int> level(nranks, 0);
  std::vector<Group> groups;
  for (;;) {
    std::vector<std::vector<int>> homes(nranks);
    for (std::size_t r = 0; r < nranks; ++r) {
      homes[r] = home_cores(node, cores, seeds[r], level[r]);
      // A GPU whose domain the scheduler did not grant: look wider at once.
      while (homes[r].empty() && level[r] < 2)
        homes[r] = home_cores(node, cores, seeds[r], ++level[r]);
    }
    groups = group_ranks(homes);
    bool widened = false;
    for (const auto& g : groups) {
      if (g.cores.size() >= g.ranks.size()) continue;
      for (int r : g.ranks) {
        if (level[static_cast<std::size_t>(r)] < 2) {
          ++level[static_cast<std::size_t>(r)];
          widened = true;
        }
      }
    }
    if (!widened) break;
  }
  for (auto& g : groups) {
    // Ranks of one group take the group's cores in order of their GPUs' place among the cores, so
    // a rank's slice lands as near its own GPU as the split allows.
    std::stable_sort(g.ranks.begin(), g.ranks.end(), [&](int a, int b) {
      return gpu_rank_order[static_cast<std::size_t>(a)] <
             gpu_rank_order[static_cast<std::size_t>(b)];
    });
    const std::size_t n = g.cores.size();
    const std::size_t m = g.ranks.size();
    std::size_t next = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t take = n / m + (i < n % m ? 1 : 0);
      auto& rank = map.ranks[static_cast<std::size_t>(g.ranks[i])];
      for (std::size_t k = 0; k < take; ++k)
        rank.cpus |= cores[static_cast<std::size_t>(g.cores[next + k])].pus;
      rank.numa =
          node.cores[static_cast<std::size_t>(cores[static_cast<std::size_t>(g.cores[next])].index)]
              .numa;
      next += take;
    }
  }
}

void assign_nics(const Node& node, RankMap& map) {
  const std::vector<int> candidates = candidate_nics(node);
  if (candidates.empty() || map.policy.nic == NicPolicy::kNone) return;
  if (map.policy.nic == NicPolicy::kAll) {
    for (auto& rank : map.ranks) rank.nics = candidates;
    return;
  }
  // One unit per (rank, GPU); a rank without a GPU is one unit placed by its CPUs.
  struct Unit {
    std::size_t rank;
    std::vector<int> nearest;  // candidates at the minimum distance, in PCI order
    int chosen = -1;
  };
  std::vector<Unit> units;
  for (std::size_t r = 0; r < map.ranks.size(); ++r) {
    const auto& rank = map.ranks[r];
    std::vector<int> gpus = rank.node_gpus;
    if (gpus.empty()) gpus.push_back(-1);
    for (int g : gpus) {
      Unit u{r, {}, -1};
      auto best = PciDistance::kCrossPackage;
      for (int n : candidates) {
        const auto& nic = node.nics[static_cast<std::size_t>(n)];
        const auto d = g >= 0 ? pci_distance(node, node.gpus[static_cast<std::size_t>(g)], nic)
                              : cpu_distance(node, rank.cpus, nic);
        if (u.nearest.empty() || d < best) {
          best = d;
          u.nearest = {n};
        } else if (d == best) {
          u.nearest.push_back(n);
        }
      }
      units.push_back(std::move(u));
    }
  }
  std::vector<int> load(node.nics.size(), 0);
  // Unambiguous choices first, so the balancing of ties sees the whole load.
  for (auto& u : units) {
    if (u.nearest.size() == 1) {
      u.chosen = u.nearest.front();
      ++load[static_cast<std::size_t>(u.chosen)];
    }
  }
  for (auto& u : units) {
    if (u.chosen >= 0) continue;
    u.chosen = *std::min_element(u.nearest.begin(), u.nearest.end(), [&](int a, int b) {
      return load[static_cast<std::size_t>(a)] < load[static_cast<std::size_t>(b)];
    });
    ++load[static_cast<std::size_t>(u.chosen)];
  }
  for (const auto& u : units) {
    auto& nics = map.ranks[u.rank].nics;
    if (std::find(nics.begin(), nics.end(), u.chosen) == nics.end()) nics.push_back(u.chosen);
  }
}

}  // namespace

std::vector<int> candidate_nics(const Node& node) {
  const bool any_fast =
      std::any_of(node.nics.begin(), node.nics.end(), [](const Nic& n) { return n.high_speed; });
  std::vector<int> out;
  for (std::size_t i = 0; i < node.nics.size(); ++i) {
    if (!any_fast || node.nics[i].high_speed) out.push_back(static_cast<int>(i));
  }
  return out;
}

RankMap solve(const Node& node, int ranks, const Policy& policy, const Restriction& restriction) {
  if (ranks < 1) {
    throw PolicyError("dtrain: affinity: ranks per node: expected at least 1, got " +
                      std::to_string(ranks));
  }
  RankMap map;
  map.policy = policy;
  map.allowed_cpus = node.all_pus();
  if (restriction.cpus) map.allowed_cpus = map.allowed_cpus & *restriction.cpus;
  const auto cores = usable_cores(node, map.allowed_cpus);
  if (cores.empty()) {
    throw TopologyError("dtrain: affinity: " + node.source +
                        ": no cores left to run on; expected at least one core in the allowed "
                        "cpuset, got \"" +
                        map.allowed_cpus.to_list() + "\"");
  }
  if (policy.cpu == CpuPolicy::kNuma && static_cast<std::size_t>(ranks) > cores.size()) {
    throw TopologyError("dtrain: affinity: " + node.source + ": " + std::to_string(ranks) +
                        " ranks per node but only " + std::to_string(cores.size()) +
                        " cores to bind them to; expected at most " + std::to_string(cores.size()) +
                        " ranks (or --cpu none), got " + std::to_string(ranks));
  }
  map.visible_gpus = visible_gpus(node, restriction);
  map.ranks.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) map.ranks[static_cast<std::size_t>(r)].local_rank = r;

  std::vector<int> order;
  if (policy.gpu != GpuPolicy::kNone) order = gpu_order(node, map.visible_gpus, policy.gpu);
  assign_gpus(order, map);

  // Where each rank's first GPU stands in the taking order: the tie-break for core slices.
  std::vector<int> rank_order(map.ranks.size(), 0);
  for (std::size_t r = 0; r < map.ranks.size(); ++r) {
    const auto& gpus = map.ranks[r].gpus;
    if (!gpus.empty()) {
      rank_order[r] =
          static_cast<int>(std::find(order.begin(), order.end(), gpus.front()) - order.begin());
    }
  }
  if (policy.cpu == CpuPolicy::kNuma) {
    assign_cpus(node, cores, rank_order, map);
  } else {
    for (auto& rank : map.ranks) {
      rank.cpus = map.allowed_cpus;
      if (!rank.node_gpus.empty())
        rank.numa = node.gpus[static_cast<std::size_t>(rank.node_gpus.front())].numa;
    }
  }

  for (auto& rank : map.ranks) {
    rank.visible_gpus = rank.gpus;
    if (policy.gpu_visibility == GpuVisibility::kOwnFirst && !rank.gpus.empty()) {
      for (int rel = 0; rel < static_cast<int>(map.visible_gpus.size()); ++rel) {
        if (std::find(rank.gpus.begin(), rank.gpus.end(), rel) == rank.gpus.end()) {
          rank.visible_gpus.push_back(rel);
        }
      }
    }
  }
  assign_nics(node, map);
  return map;
}

}  // namespace dtrain::affinity
