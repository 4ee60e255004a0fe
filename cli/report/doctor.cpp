#include "report/doctor.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "affinity/cpuset.hpp"

namespace dtrain::report {
namespace {

affinity::CpuSet cpus_of(const std::string& list) {
  try {
    return affinity::CpuSet::parse(list);
  } catch (const std::exception&) {
    return {};
  }
}

// NCCL_IB_HCA / UCX_NET_DEVICES / NCCL_SOCKET_IFNAME entries: "=mlx5_0,mlx5_1", "^mlx5_2",
// "mlx5_0:1", "eth" (a prefix). Returns the names with the decorations removed, and whether they
// are exact names (a leading '=') rather than prefixes.
std::vector<std::string> listed_names(std::string value, bool& exact, bool& excluded) {
  exact = !value.empty() && value.front() == '=';
  excluded = !value.empty() && value.front() == '^';
  if (exact || excluded) value.erase(0, 1);
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= value.size()) {
    const std::size_t comma = std::min(value.find(',', pos), value.size());
    std::string item = value.substr(pos, comma - pos);
    item = item.substr(0, item.find(':'));  // "mlx5_0:1" names the port
    if (!item.empty()) out.push_back(item);
    pos = comma + 1;
  }
  return out;
}

bool present(const std::string& name, const std::vector<std::string>& names, bool exact) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    return exact ? n == name : n.rfind(name, 0) == 0;
  });
}

std::string get(const RankReport& r, const std::string& name) {
  auto it = r.env.find(name);
  return it == r.env.end() ? std::string() : it->second;
}

}  // namespace

const std::vector<std::string>& doctor_env_names() {
  static const std::vector<std::string> names = {"CUDA_VISIBLE_DEVICES",
                                                 "CUDA_DEVICE_ORDER",
                                                 "NCCL_IB_HCA",
                                                 "NCCL_SOCKET_IFNAME",
                                                 "UCX_NET_DEVICES",
                                                 "MASTER_ADDR",
                                                 "MASTER_PORT",
                                                 "RANK",
                                                 "LOCAL_RANK",
                                                 "WORLD_SIZE",
                                                 "LOCAL_WORLD_SIZE",
                                                 "NODE_RANK",
                                                 "TF_CONFIG",
                                                 "JAX_COORDINATOR_ADDRESS",
                                                 "JAX_NUM_PROCESSES",
                                                 "JAX_PROCESS_ID",
                                                 "OMP_NUM_THREADS",
                                                 "DTRAIN_RUN_DIR",
                                                 "DTRAIN_JOB_ID"};
  return names;
}

nlohmann::json report_to_json(const RankReport& r) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.gpus) {
    gpus.push_back(
        {{"pci", g.pci}, {"name", g.name}, {"local_cpus", g.local_cpus}, {"numa", g.numa}});
  }
  return {{"rank", r.rank},
          {"size", r.size},
          {"local_rank", r.local_rank},
          {"local_size", r.local_size},
          {"host", r.host},
          {"launcher", r.launcher},
          {"cpuset", r.cpuset},
          {"gpus", gpus},
          {"nics", r.nics},
          {"netdevs", r.netdevs},
          {"env", r.env},
          {"master_port_in_use", r.master_port_in_use}};
}

RankReport report_from_json(const nlohmann::json& j) {
  RankReport r;
  r.rank = j.at("rank").get<int>();
  r.size = j.at("size").get<int>();
  r.local_rank = j.at("local_rank").get<int>();
  r.local_size = j.at("local_size").get<int>();
  r.host = j.at("host").get<std::string>();
  r.launcher = j.at("launcher").get<std::string>();
  r.cpuset = j.at("cpuset").get<std::string>();
  for (const auto& g : j.at("gpus")) {
    r.gpus.push_back({g.at("pci").get<std::string>(), g.at("name").get<std::string>(),
                      g.at("local_cpus").get<std::string>(), g.at("numa").get<int>()});
  }
  r.nics = j.at("nics").get<std::vector<std::string>>();
  r.netdevs = j.at("netdevs").get<std::vector<std::string>>();
  r.env = j.at("env").get<std::map<std::string, std::string>>();
  r.master_port_in_use = j.at("master_port_in_use").get<bool>();
  return r;
}

namespace {

// The checks, one per mistake; each appends its warnings in the order `dtrain doctor` prints.
using Warnings = std::vector<std::string>;

void check_shared_resources(const RankReport& a, const RankReport& b, Warnings& warnings) {
  if (a.host != b.host) return;
  const std::string pair =
      "ranks " + std::to_string(a.rank) + " and " + std::to_string(b.rank) + " on " + a.host;
  if (!a.gpus.empty() && !b.gpus.empty() && a.gpus.front().pci == b.gpus.front().pci) {
    warnings.push_back(pair + " share GPU " + a.gpus.front().pci +
                       "; expected one GPU per rank (check CUDA_VISIBLE_DEVICES or the "
                       "affinity policy)");
  }
  const auto ca = cpus_of(a.cpuset);
  const auto cb = cpus_of(b.cpuset);
  if (ca.intersects(cb)) {
    warnings.push_back(pair + " have overlapping cpusets " + a.cpuset + " and " + b.cpuset +
                       " (shared " + (ca & cb).to_list() + "); expected disjoint cores per rank");
  }
}

void check_gpu_locality(const RankReport& a, Warnings& warnings) {
  if (a.gpus.empty() || a.gpus.front().local_cpus.empty()) return;
  const auto mine = cpus_of(a.cpuset);
  const auto local = cpus_of(a.gpus.front().local_cpus);
  if (!mine.empty() && !local.empty() && !mine.intersects(local)) {
    warnings.push_back("rank " + std::to_string(a.rank) + " on " + a.host + " runs on cores " +
                       a.cpuset + ", none of them near its GPU " + a.gpus.front().pci + " (near: " +
                       a.gpus.front().local_cpus + "); expected cores in the GPU's NUMA domain");
  }
}

std::string nic_list(const RankReport& a) {
  if (a.nics.empty()) return "(no NICs found)";
  std::string s;
  for (const auto& n : a.nics) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void check_nic_names(const RankReport& a, Warnings& warnings) {
  for (const char* var : {"NCCL_IB_HCA", "UCX_NET_DEVICES"}) {
    const std::string value = get(a, var);
    if (value.empty()) continue;
    bool exact = false;
    bool excluded = false;
    for (const auto& name : listed_names(value, exact, excluded)) {
      if (excluded || name == "all") continue;
      // UCX also accepts network interfaces and shared-memory transports.
      const bool ucx_other =
          std::string(var) == "UCX_NET_DEVICES" && (present(name, a.netdevs, true) || name == "lo");
      if (!present(name, a.nics, exact) && !ucx_other) {
        warnings.push_back("rank " + std::to_string(a.rank) + " on " + a.host + ": " + var +
                           " names " + name + ", which this node does not have; expected one " +
                           "of: " + nic_list(a));
      }
    }
  }
}

void check_socket_ifname(const RankReport& a, Warnings& warnings) {
  const std::string ifname = get(a, "NCCL_SOCKET_IFNAME");
  if (ifname.empty()) return;
  bool exact = false;
  bool excluded = false;
  for (const auto& name : listed_names(ifname, exact, excluded)) {
    if (!excluded && !present(name, a.netdevs, exact)) {
      warnings.push_back("rank " + std::to_string(a.rank) + " on " + a.host +
                         ": NCCL_SOCKET_IFNAME names " + name +
                         ", which matches no network interface of this node");
    }
  }
}

void check_master_port(const RankReport& a, Warnings& warnings) {
  if (!a.master_port_in_use) return;
  warnings.push_back("MASTER_PORT " + get(a, "MASTER_PORT") + " on " + a.host +
                     " is already in use (another job on this node?); expected a free port, "
                     "e.g. dtrain's per-job port");
}

// Every rank must agree on the rendezvous point.
void check_rendezvous(const std::vector<RankReport>& ranks, Warnings& warnings) {
  std::set<std::string> masters;
  for (const auto& r : ranks) {
    const std::string addr = get(r, "MASTER_ADDR");
    const std::string port = get(r, "MASTER_PORT");
    if (!addr.empty() || !port.empty()) masters.insert(addr + ":" + port);
  }
  if (masters.size() <= 1) return;
  std::string list;
  for (const auto& m : masters) list += (list.empty() ? "" : ", ") + m;
  warnings.push_back("ranks disagree on MASTER_ADDR:MASTER_PORT (" + list +
                     "); expected one rendezvous point for the whole job");
}

}  // namespace

std::vector<std::string> doctor_warnings(const std::vector<RankReport>& ranks) {
  Warnings warnings;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    for (std::size_t j = i + 1; j < ranks.size(); ++j) {
      check_shared_resources(ranks[i], ranks[j], warnings);
    }
    check_gpu_locality(ranks[i], warnings);
    check_nic_names(ranks[i], warnings);
    check_socket_ifname(ranks[i], warnings);
    check_master_port(ranks[i], warnings);
  }
  check_rendezvous(ranks, warnings);
  return warnings;
}

std::string format_doctor_table(const std::vector<RankReport>& ranks) {
  std::string out =
      "rank  host              local  gpu                        cpus          nics\n";
  for (const auto& r : ranks) {
    std::string gpu = r.gpus.empty() ? "-" : r.gpus.front().pci;
    if (!r.gpus.empty() && !r.gpus.front().name.empty()) gpu += " " + r.gpus.front().name;
    std::string nics;
    for (const char* var : {"NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"}) {
      const std::string v = get(r, var);
      if (!v.empty()) nics += (nics.empty() ? "" : " ") + std::string(var) + "=" + v;
    }
    char line[512];
    std::snprintf(line, sizeof line, "%-5d %-17s %-6s %-26s %-13s %s\n", r.rank, r.host.c_str(),
                  (std::to_string(r.local_rank) + "/" + std::to_string(r.local_size)).c_str(),
                  gpu.c_str(), r.cpuset.c_str(), nics.empty() ? "-" : nics.c_str());
    out += line;
  }
  return out;
}

}  // namespace dtrain::report
