// Shared by the affinity tests: the topology fixtures (loaded once) and the solver's invariants,
// checked the same way on every topology, rank count and policy.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "affinity/affinity.hpp"
#include "affinity/topology.hpp"

namespace dtrain::affinity::testing {

inline std::string fixture_path(const std::string& name) {
  return std::string(DTRAIN_FIXTURE_DIR) + "/topologies/" + name;
}

// The five real exports of ../shared/topologies/ plus the hand-built Polaris-like node.
inline const std::vector<std::string>& all_fixtures() {
  static const std::vector<std::string> names = {
      "dgx2-16xv100-trimmed.xml", "lassen-power9-4xv100.xml", "tioga-cray-ex235a-8xmi250x.xml",
      "pascal-2xp100.xml",        "quartz-nogpu.xml",         "polaris-like-4xa100.xml"};
  return names;
}

inline const Node& fixture(const std::string& name) {
  static std::map<std::string, Node> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, load_node_xml(fixture_path(name))).first;
  return it->second;
}

inline const Gpu& gpu_by_os_name(const Node& node, const std::string& os_name) {
  for (const auto& g : node.gpus) {
    if (std::find(g.os_names.begin(), g.os_names.end(), os_name) != g.os_names.end()) return g;
  }
  ADD_FAILURE() << "no GPU with OS device " << os_name << " in " << node.source;
  static const Gpu none;
  return none;
}

inline int nic_index(const Node& node, const std::string& name) {
  for (std::size_t i = 0; i < node.nics.size(); ++i) {
    if (node.nics[i].name == name || node.nics[i].netdev == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no NIC " << name << " in " << node.source;
  return -1;
}

inline std::vector<int> rank_gpus(const RankMap& map, int r) {
  return map.ranks[static_cast<std::size_t>(r)].gpus;
}

inline std::vector<std::string> rank_nics(const Node& node, const RankMap& map, int r) {
  std::vector<std::string> out;
  for (int n : map.ranks[static_cast<std::size_t>(r)].nics) {
    out.push_back(node.nics[static_cast<std::size_t>(n)].name);
  }
  return out;
}

inline int cores_in(const Node& node, const CpuSet& cpus) {
  return static_cast<int>(std::count_if(node.cores.begin(), node.cores.end(),
                                        [&](const Core& c) { return c.pus.is_subset_of(cpus); }));
}

inline CpuSet numa_cpus(const Node& node, const std::vector<int>& numa) {
  CpuSet out;
  for (int n : numa) out |= node.find_numa(n)->cpus;
  return out;
}

inline CpuSet package_cpus(const Node& node, const std::vector<int>& numa) {
  CpuSet out;
  for (int n : numa) out |= node.find_package(node.find_numa(n)->package)->cpus;
  return out;
}

// Every invariant of affinity.hpp that holds for any node, rank count and policy.
inline void check_invariants(const Node& node, const RankMap& map, int ranks, const Policy& policy,
                             const Restriction& restriction = {}) {
  SCOPED_TRACE(node.source + ", " + std::to_string(ranks) + " ranks, gpu=" +
               std::string(to_string(policy.gpu)) + " cpu=" + std::string(to_string(policy.cpu)) +
               " nic=" + std::string(to_string(policy.nic)));
  ASSERT_EQ(map.ranks.size(), static_cast<std::size_t>(ranks));
  const CpuSet allowed = restriction.cpus ? node.all_pus() & *restriction.cpus : node.all_pus();
  EXPECT_EQ(map.allowed_cpus, allowed);
  const int g = static_cast<int>(map.visible_gpus.size());
  const bool with_gpus = g > 0 && policy.gpu != GpuPolicy::kNone;

  // 1. GPUs.
  std::map<int, int> load;
  for (int r = 0; r < ranks; ++r) {
    const auto& a = map.ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(a.local_rank, r);
    ASSERT_EQ(a.gpus.size(), a.node_gpus.size());
    for (std::size_t i = 0; i < a.gpus.size(); ++i) {
      ASSERT_GE(a.gpus[i], 0);
      ASSERT_LT(a.gpus[i], g);
      EXPECT_EQ(a.node_gpus[i], map.visible_gpus[static_cast<std::size_t>(a.gpus[i])]);
      ++load[a.gpus[i]];
    }
    if (!with_gpus) {
      EXPECT_TRUE(a.gpus.empty()) << "rank " << r;
      continue;
    }
    if (ranks >= g) {
      EXPECT_EQ(a.gpus.size(), 1U) << "rank " << r;
    } else {
      EXPECT_EQ(a.gpus.size(), static_cast<std::size_t>(g / ranks)) << "rank " << r;
    }
    // Visibility: own, or own first and then every other visible GPU once.
    if (policy.gpu_visibility == GpuVisibility::kOwn) {
      EXPECT_EQ(a.visible_gpus, a.gpus);
    } else {
      ASSERT_EQ(a.visible_gpus.size(), static_cast<std::size_t>(g));
      EXPECT_TRUE(std::equal(a.gpus.begin(), a.gpus.end(), a.visible_gpus.begin()));
      EXPECT_EQ(std::set<int>(a.visible_gpus.begin(), a.visible_gpus.end()).size(),
                static_cast<std::size_t>(g));
    }
  }
  if (with_gpus) {
    if (ranks <= g) {
      // A bijection (ranks = GPUs) or disjoint equal groups (ranks < GPUs).
      for (const auto& [gpu, n] : load) EXPECT_EQ(n, 1) << "GPU " << gpu << " shared";
    } else {
      // Shared evenly, and ranks 0..G-1 each on a different GPU before any GPU takes a second.
      int lo = ranks;
      int hi = 0;
      for (int gpu = 0; gpu < g; ++gpu) {
        lo = std::min(lo, load[gpu]);
        hi = std::max(hi, load[gpu]);
      }
      EXPECT_LE(hi - lo, 1);
      for (int r = 0; r + g < ranks; ++r) {
        EXPECT_EQ(rank_gpus(map, r), rank_gpus(map, r + g)) << "rank " << r << " and " << r + g;
      }
    }
  }

  // 2. and 4. CPUs.
  for (int r = 0; r < ranks; ++r) {
    const auto& a = map.ranks[static_cast<std::size_t>(r)];
    EXPECT_FALSE(a.cpus.empty()) << "rank " << r;
    EXPECT_TRUE(a.cpus.is_subset_of(allowed)) << "rank " << r << ": " << a.cpus.to_list();
    if (policy.cpu == CpuPolicy::kNone) {
      EXPECT_EQ(a.cpus, allowed);
      continue;
    }
    EXPECT_EQ(a.numa, node.numa_of(CpuSet{a.cpus.first()}).front()) << "rank " << r;
    for (int s = r + 1; s < ranks; ++s) {
      EXPECT_FALSE(a.cpus.intersects(map.ranks[static_cast<std::size_t>(s)].cpus))
          << "ranks " << r << " and " << s << " overlap";
    }
    // Hyperthreads of one core stay together.
    for (const auto& core : node.cores) {
      const CpuSet mine = core.pus & allowed;
      if (mine.intersects(a.cpus)) {
        EXPECT_TRUE(mine.is_subset_of(a.cpus)) << "rank " << r;
      }
    }
    if (!with_gpus) continue;
    // Inside the GPUs' NUMA domains when they have a core for every rank seeded there, else
    // inside their package when that has enough.
    CpuSet near;
    for (int n : a.node_gpus) near |= node.gpus[static_cast<std::size_t>(n)].locality;
    const auto seed = node.numa_of(near);
    int competing = 0;
    int competing_package = 0;
    for (const auto& b : map.ranks) {
      CpuSet bnear;
      for (int n : b.node_gpus) bnear |= node.gpus[static_cast<std::size_t>(n)].locality;
      competing += numa_cpus(node, seed).intersects(numa_cpus(node, node.numa_of(bnear)));
      competing_package += package_cpus(node, seed).intersects(bnear);
    }
    const CpuSet numa_allowed = numa_cpus(node, seed) & allowed;
    const CpuSet package_allowed = package_cpus(node, seed) & allowed;
    if (cores_in(node, numa_allowed) >= competing) {
      EXPECT_TRUE(a.cpus.is_subset_of(numa_allowed))
          << "rank " << r << ": " << a.cpus.to_list() << " not in " << numa_allowed.to_list();
    } else if (cores_in(node, package_allowed) >= competing_package) {
      EXPECT_TRUE(a.cpus.is_subset_of(package_allowed))
          << "rank " << r << ": " << a.cpus.to_list() << " not in " << package_allowed.to_list();
    }
  }
  if (policy.cpu == CpuPolicy::kNuma) {
    // Cores split evenly: ranks whose cpusets lie in the same NUMA domains, and whose GPUs (if
    // any) sit in the same domains, differ by at most one core.
    std::map<std::pair<std::vector<int>, std::vector<int>>, std::vector<int>> sizes;
    for (const auto& a : map.ranks) {
      CpuSet near;
      for (int n : a.node_gpus) near |= node.gpus[static_cast<std::size_t>(n)].locality;
      sizes[{node.numa_of(a.cpus), node.numa_of(near)}].push_back(cores_in(node, a.cpus));
    }
    for (const auto& [key, list] : sizes) {
      const auto [lo, hi] = std::minmax_element(list.begin(), list.end());
      EXPECT_LE(*hi - *lo, 1);
    }
  }

  // 3. NICs.
  const auto candidates = candidate_nics(node);
  for (int r = 0; r < ranks; ++r) {
    const auto& a = map.ranks[static_cast<std::size_t>(r)];
    for (int n : a.nics) {
      EXPECT_NE(std::find(candidates.begin(), candidates.end(), n), candidates.end());
    }
    if (policy.nic == NicPolicy::kNone || candidates.empty()) {
      EXPECT_TRUE(a.nics.empty());
      continue;
    }
    if (policy.nic == NicPolicy::kAll) {
      EXPECT_EQ(a.nics, candidates);
      continue;
    }
    // Closest: for each of the rank's GPUs one of its NICs is at the minimum PCI distance.
    for (int gpu : a.node_gpus) {
      const auto& dev = node.gpus[static_cast<std::size_t>(gpu)];
      auto best = PciDistance::kCrossPackage;
      for (int n : candidates) {
        best = std::min(best, pci_distance(node, dev, node.nics[static_cast<std::size_t>(n)]));
      }
      EXPECT_TRUE(std::any_of(a.nics.begin(), a.nics.end(),
                              [&](int n) {
                                return pci_distance(node, dev,
                                                    node.nics[static_cast<std::size_t>(n)]) == best;
                              }))
          << "rank " << r << " GPU " << gpu;
    }
    if (a.node_gpus.size() <= 1) {
      EXPECT_EQ(a.nics.size(), 1U) << "rank " << r;
    }
  }
}

}  // namespace dtrain::affinity::testing
