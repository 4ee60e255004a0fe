#include "affinity/report.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace dtrain::affinity {
namespace {

using Json = nlohmann::ordered_json;
using Row = std::vector<std::string>;

std::string join(const std::vector<std::string>& items, const char* sep = ",") {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string join_ints(const std::vector<int>& items) {
  std::vector<std::string> s;
  for (int i : items) s.push_back(std::to_string(i));
  return join(s);
}

// Columns padded to their widest cell, two spaces apart; the last column is not padded.
std::string table(const std::vector<Row>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

// "1 core", "2 cores"
std::string count(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

int cores_in(const Node& node, int numa) {
  return static_cast<int>(std::count_if(node.cores.begin(), node.cores.end(),
                                        [&](const Core& c) { return c.numa == numa; }));
}

std::vector<std::string> nic_names(const Node& node, const std::vector<int>& nics) {
  std::vector<std::string> out;
  for (int n : nics) out.push_back(node.nics[static_cast<std::size_t>(n)].name);
  return out;
}

std::vector<std::string> gpu_pcis(const Node& node, const std::vector<int>& gpus) {
  std::vector<std::string> out;
  for (int g : gpus) out.push_back(node.gpus[static_cast<std::size_t>(g)].pci.to_string());
  return out;
}

}  // namespace

Json node_to_json(const Node& node) {
  Json j;
  j["source"] = node.source;
  j["this_machine"] = node.is_this_machine;
  j["cores"] = node.cores.size();
  j["pus"] = node.all_pus().count();
  j["packages"] = Json::array();
  for (const auto& p : node.packages) {
    j["packages"].push_back({{"os_index", p.os_index}, {"cpus", p.cpus.to_list()}});
  }
  j["numa"] = Json::array();
  for (const auto& n : node.numa) {
    j["numa"].push_back({{"os_index", n.os_index},
                         {"package", n.package},
                         {"cores", cores_in(node, n.os_index)},
                         {"cpus", n.cpus.to_list()}});
  }
  j["gpus"] = Json::array();
  for (std::size_t i = 0; i < node.gpus.size(); ++i) {
    const auto& g = node.gpus[i];
    Json distances = Json::object();
    for (const auto& nic : node.nics) {
      distances[nic.name] = std::string(to_string(pci_distance(node, g, nic)));
    }
    j["gpus"].push_back({{"index", i},
                         {"pci", g.pci.to_string()},
                         {"vendor", std::string(to_string(g.vendor))},
                         {"name", g.name},
                         {"os_names", g.os_names},
                         {"numa", g.numa},
                         {"package", g.package},
                         {"cpus", g.locality.to_list()},
                         {"nic_distance", distances}});
  }
  j["nics"] = Json::array();
  for (const auto& n : node.nics) {
    j["nics"].push_back({{"name", n.name},
                         {"netdev", n.netdev},
                         {"kind", std::string(to_string(n.kind))},
                         {"high_speed", n.high_speed},
                         {"pci", n.pci.to_string()},
                         {"numa", n.numa},
                         {"package", n.package},
                         {"cpus", n.locality.to_list()}});
  }
  return j;
}

Json rank_to_json(const Node& node, const RankMap& map, int local_rank) {
  const auto& r = map.ranks.at(static_cast<std::size_t>(local_rank));
  Json j;
  j["local_rank"] = r.local_rank;
  j["gpus"] = r.gpus;
  j["gpu_pci"] = gpu_pcis(node, r.node_gpus);
  j["visible_gpus"] = r.visible_gpus;
  j["cpus"] = r.cpus.to_list();
  j["numa"] = r.numa;
  j["nics"] = nic_names(node, r.nics);
  return j;
}

Json topology_to_json(const Node& node, const RankMap& map) {
  Json j;
  j["node"] = node_to_json(node);
  j["policy"] = {{"gpu", std::string(to_string(map.policy.gpu))},
                 {"gpu_visibility", std::string(to_string(map.policy.gpu_visibility))},
                 {"cpu", std::string(to_string(map.policy.cpu))},
                 {"nic", std::string(to_string(map.policy.nic))}};
  j["visible_gpu_pci"] = gpu_pcis(node, map.visible_gpus);
  j["allowed_cpus"] = map.allowed_cpus.to_list();
  j["ranks"] = Json::array();
  for (std::size_t r = 0; r < map.ranks.size(); ++r) {
    j["ranks"].push_back(rank_to_json(node, map, static_cast<int>(r)));
  }
  return j;
}

Json environment_to_json(const launch::Environment& env) {
  Json j = Json::object();
  for (const auto& [k, v] : env) j[k] = v;
  return j;
}

std::string node_to_text(const Node& node) {
  std::string out = "# node: " + node.source + " (" + count(node.packages.size(), "package") +
                    ", " + count(node.numa.size(), "NUMA domain") + ", " +
                    count(node.cores.size(), "core") + ", " +
                    count(static_cast<std::size_t>(node.all_pus().count()), "PU") + ")\n";
  std::vector<Row> numa{{"numa", "package", "cores", "cpus"}};
  for (const auto& n : node.numa) {
    numa.push_back({std::to_string(n.os_index), std::to_string(n.package),
                    std::to_string(cores_in(node, n.os_index)), n.cpus.to_list()});
  }
  out += table(numa);
  if (node.gpus.empty()) {
    out += "\n# no GPUs\n";
  } else {
    std::vector<Row> gpus{{"gpu", "pci", "vendor", "numa", "cpus", "name"}};
    for (std::size_t i = 0; i < node.gpus.size(); ++i) {
      const auto& g = node.gpus[i];
      gpus.push_back({std::to_string(i), g.pci.to_string(), std::string(to_string(g.vendor)),
                      std::to_string(g.numa), g.locality.to_list(), or_dash(g.name)});
    }
    out += "\n" + table(gpus);
  }
  if (node.nics.empty()) {
    out += "\n# no NICs\n";
  } else {
    std::vector<Row> nics{{"nic", "kind", "pci", "numa", "cpus", "netdev", "use"}};
    const auto candidates = candidate_nics(node);
    for (std::size_t i = 0; i < node.nics.size(); ++i) {
      const auto& n = node.nics[i];
      const bool chosen =
          std::find(candidates.begin(), candidates.end(), static_cast<int>(i)) != candidates.end();
      nics.push_back({n.name, std::string(to_string(n.kind)), n.pci.to_string(),
                      std::to_string(n.numa), n.locality.to_list(), or_dash(n.netdev),
                      chosen ? "training" : "management (not used)"});
    }
    out += "\n" + table(nics);
  }
  return out;
}

std::string rank_map_to_text(const Node& node, const RankMap& map) {
  std::string out = "# rank map: " + count(map.ranks.size(), "rank") +
                    " per node, gpu=" + std::string(to_string(map.policy.gpu)) +
                    " gpu_visibility=" + std::string(to_string(map.policy.gpu_visibility)) +
                    " cpu=" + std::string(to_string(map.policy.cpu)) +
                    " nic=" + std::string(to_string(map.policy.nic)) + "\n";
  std::vector<Row> rows{{"rank", "gpus", "gpu_pci", "visible", "numa", "cpus", "nics"}};
  for (const auto& r : map.ranks) {
    rows.push_back({std::to_string(r.local_rank), or_dash(join_ints(r.gpus)),
                    or_dash(join(gpu_pcis(node, r.node_gpus))), or_dash(join_ints(r.visible_gpus)),
                    r.numa < 0 ? "-" : std::to_string(r.numa), or_dash(r.cpus.to_list()),
                    or_dash(join(nic_names(node, r.nics)))});
  }
  return out + table(rows);
}

}  // namespace dtrain::affinity
