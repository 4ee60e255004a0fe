// The pure half of the topology model: PCI ids, distances and summaries (no hwloc here).
#include <algorithm>
#include <charconv>
#include <cstdio>

#include "affinity/topology.hpp"

namespace dtrain::affinity {
namespace {

bool parse_hex(std::string_view text, std::size_t digits, std::uint32_t& out) {
  if (text.size() != digits) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, 16);
  return ec == std::errc() && ptr == end;
}

std::vector<int> packages_of(const Node& node, const CpuSet& cpus) {
  std::vector<int> out;
  for (const auto& p : node.packages) {
    if (p.cpus.intersects(cpus)) out.push_back(p.os_index);
  }
  return out;
}

bool share_any(const std::vector<int>& a, const std::vector<int>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](int x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

PciDistance cpu_rungs(const Node& node, const CpuSet& a, const CpuSet& b) {
  if (share_any(node.numa_of(a), node.numa_of(b))) return PciDistance::kSameNuma;
  if (share_any(packages_of(node, a), packages_of(node, b))) return PciDistance::kSamePackage;
  return PciDistance::kCrossPackage;
}

}  // namespace

std::optional<PciId> PciId::parse(std::string_view text) {
  PciId id;
  // dddd:bb:dd.f or bb:dd.f
  std::string_view rest = text;
  if (rest.size() == 12) {
    if (rest[4] != ':' || !parse_hex(rest.substr(0, 4), 4, id.domain)) return std::nullopt;
    rest.remove_prefix(5);
  }
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return std::nullopt;
  if (!parse_hex(rest.substr(0, 2), 2, id.bus) || !parse_hex(rest.substr(3, 2), 2, id.device) ||
      !parse_hex(rest.substr(6, 1), 1, id.function)) {
    return std::nullopt;
  }
  return id;
}

std::string PciId::to_string() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

CpuSet Node::all_pus() const {
  CpuSet out;
  for (const auto& c : cores) out |= c.pus;
  return out;
}

const NumaDomain* Node::find_numa(int os_index) const {
  for (const auto& n : numa) {
    if (n.os_index == os_index) return &n;
  }
  return nullptr;
}

const Package* Node::find_package(int os_index) const {
  for (const auto& p : packages) {
    if (p.os_index == os_index) return &p;
  }
  return nullptr;
}

std::vector<int> Node::numa_of(const CpuSet& cpus) const {
  std::vector<int> out;
  for (const auto& n : numa) {
    if (n.cpus.intersects(cpus)) out.push_back(n.os_index);
  }
  return out;
}

PciDistance pci_distance(const Node& node, const PciDevice& a, const PciDevice& b) {
  if (a.host_bridge == b.host_bridge && (a.host_bridge >= 0 || !a.bridges.empty())) {
    // Paths are listed top first, so two devices share some bridge exactly when they share the
    // first one below the host bridge.
    if (!a.bridges.empty() && !b.bridges.empty() && a.bridges.front() == b.bridges.front()) {
      return PciDistance::kSameSwitch;
    }
    if (a.host_bridge >= 0) return PciDistance::kSameHostBridge;
  }
  return cpu_rungs(node, a.locality, b.locality);
}

PciDistance cpu_distance(const Node& node, const CpuSet& cpus, const PciDevice& device) {
  return cpu_rungs(node, cpus, device.locality);
}

std::string_view to_string(GpuVendor vendor) {
  switch (vendor) {
    case GpuVendor::kNvidia:
      return "nvidia";
    case GpuVendor::kAmd:
      return "amd";
    case GpuVendor::kIntel:
      return "intel";
    case GpuVendor::kOther:
      break;
  }
  return "other";
}

std::string_view to_string(NicKind kind) {
  switch (kind) {
    case NicKind::kInfiniBand:
      return "infiniband";
    case NicKind::kOmniPath:
      return "omnipath";
    case NicKind::kSlingshot:
      return "slingshot";
    case NicKind::kEthernet:
      break;
  }
  return "ethernet";
}

std::string_view to_string(PciDistance distance) {
  switch (distance) {
    case PciDistance::kSameSwitch:
      return "same PCIe switch";
    case PciDistance::kSameHostBridge:
      return "same host bridge";
    case PciDistance::kSameNuma:
      return "same NUMA domain";
    case PciDistance::kSamePackage:
      return "same package";
    case PciDistance::kCrossPackage:
      break;
  }
  return "across packages";
}

NodeSummary summarize(const Node& node) {
  NodeSummary s;
  s.packages = static_cast<int>(node.packages.size());
  s.numa_domains = static_cast<int>(node.numa.size());
  s.cores = static_cast<int>(node.cores.size());
  s.pus = node.all_pus().count();
  s.is_this_machine = node.is_this_machine;
  return s;
}

NodeSummary load_live_topology() { return summarize(load_live_node()); }
NodeSummary load_topology_xml(const std::string& path) { return summarize(load_node_xml(path)); }

}  // namespace dtrain::affinity
