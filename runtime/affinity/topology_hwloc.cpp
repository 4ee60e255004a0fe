// The only file that includes hwloc.h: turns an hwloc topology (this machine, an lstopo XML
// export or a synthetic description) into the plain Node value of topology.hpp.
#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "affinity/net_namespace.hpp"
#include "affinity/topology.hpp"
#include "affinity/xml_fault.hpp"
#include "common/input_file.hpp"
#include "common/number_text.hpp"

namespace dtrain::affinity {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

enum class Source { kLive, kXml, kSynthetic };

CpuSet to_cpuset(hwloc_const_bitmap_t bitmap) {
  CpuSet out;
  if (bitmap == nullptr || hwloc_bitmap_weight(bitmap) < 0) return out;  // infinite: not a cpuset
  for (int i = hwloc_bitmap_first(bitmap); i >= 0; i = hwloc_bitmap_next(bitmap, i)) out.add(i);
  return out;
}

int os_index_of(hwloc_obj_t obj, int fallback) {
  return obj->os_index == HWLOC_UNKNOWN_INDEX ? fallback : static_cast<int>(obj->os_index);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Compute devices announce themselves through these OS devices. DRM devices (card0, renderD128)
// are GPU osdevs too, but a BMC's VGA chip has them as well, so they do not make a GPU.
bool is_compute_osdev(hwloc_obj_t osdev) {
  const auto type = osdev->attr->osdev.type;
  if (type != HWLOC_OBJ_OSDEV_GPU && type != HWLOC_OBJ_OSDEV_COPROC) return false;
  const std::string_view name = osdev->name ? osdev->name : "";
  const std::string_view subtype = osdev->subtype ? osdev->subtype : "";
  for (std::string_view known : {"CUDA", "NVML", "RSMI", "LevelZero", "OpenCL"}) {
    if (subtype == known) return true;
  }
  // hwloc 2.2 wrote nvml osdevs without a subtype (Lassen's export), so the name decides too.
  for (std::string_view prefix : {"cuda", "nvml", "rsmi", "opencl", "ze"}) {
    if (starts_with(name, prefix)) return true;
  }
  return false;
}

// Without CUDA/NVML/ROCm osdevs (hwloc built without them, or an export made on a login node) a
// GPU is still a PCI display controller: a 3D controller (0302), "other display" (0380, AMD
// Instinct, Intel Max), or a VGA controller (0300) from NVIDIA or AMD. Other VGA chips (ASPEED,
// Matrox) are BMC consoles.
bool is_gpu_class(std::uint32_t pci_class, std::uint32_t vendor) {
  if (pci_class == 0x0302 || pci_class == 0x0380) return true;
  return pci_class == 0x0300 && (vendor == 0x10de || vendor == 0x1002);
}

GpuVendor gpu_vendor(std::uint32_t vendor) {
  switch (vendor) {
    case 0x10de:
      return GpuVendor::kNvidia;
    case 0x1002:
      return GpuVendor::kAmd;
    case 0x8086:
      return GpuVendor::kIntel;
    default:
      return GpuVendor::kOther;
  }
}

struct PciEntry {
  hwloc_obj_t pci = nullptr;
  std::vector<hwloc_obj_t> osdevs;
};

PciDevice describe_pci(hwloc_topology_t topo, hwloc_obj_t pci) {
  PciDevice d;
  const auto& a = pci->attr->pcidev;
  d.pci.domain = static_cast<std::uint32_t>(a.domain);
  d.pci.bus = a.bus;
  d.pci.device = a.dev;
  d.pci.function = a.func;
  d.vendor_id = a.vendor_id;
  d.device_id = a.device_id;
  d.pci_class = a.class_id;
  hwloc_obj_t cpu_parent = hwloc_get_non_io_ancestor_obj(topo, pci);
  d.locality = to_cpuset(cpu_parent ? cpu_parent->cpuset : nullptr);
  for (hwloc_obj_t p = pci->parent; p != nullptr && p->type == HWLOC_OBJ_BRIDGE; p = p->parent) {
    const auto id = static_cast<std::int64_t>(p->gp_index);
    if (p->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      d.host_bridge = id;
    } else {
      d.bridges.insert(d.bridges.begin(), id);
    }
  }
  return d;
}

void place(const Node& node, PciDevice& d) {
  const int first = d.locality.first();
  for (const auto& n : node.numa) {
    if (n.cpus.contains(first)) d.numa = n.os_index;
  }
  for (const auto& p : node.packages) {
    if (p.cpus.contains(first)) d.package = p.os_index;
  }
}

std::string first_info(const std::vector<hwloc_obj_t>& objs, const char* key) {
  for (hwloc_obj_t o : objs) {
    if (const char* v = hwloc_obj_get_info_by_name(o, key)) return v;
  }
  return {};
}

void add_gpu(hwloc_topology_t topo, const PciEntry& e, Node& node) {
  Gpu g;
  static_cast<PciDevice&>(g) = describe_pci(topo, e.pci);
  g.vendor = gpu_vendor(g.vendor_id);
  g.name = first_info(e.osdevs, "GPUModel");
  if (g.name.empty()) g.name = first_info({e.pci}, "PCIDevice");
  for (hwloc_obj_t o : e.osdevs) {
    if (o->name && is_compute_osdev(o)) g.os_names.emplace_back(o->name);
  }
  std::sort(g.os_names.begin(), g.os_names.end());
  place(node, g);
  node.gpus.push_back(std::move(g));
}

void add_nic(hwloc_topology_t topo, const PciEntry& e, Node& node) {
  Nic n;
  static_cast<PciDevice&>(n) = describe_pci(topo, e.pci);
  std::string verbs;
  for (hwloc_obj_t o : e.osdevs) {
    if (o->name == nullptr) continue;
    if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && verbs.empty()) verbs = o->name;
    if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && n.netdev.empty()) n.netdev = o->name;
  }
  n.name = verbs.empty() ? n.netdev : verbs;
  if (n.vendor_id == 0x17db) {
    n.kind = NicKind::kSlingshot;  // HPE Cassini: Ethernet class, but the Slingshot fabric
  } else if (!verbs.empty()) {
    n.kind = (n.pci_class == 0x0208 || starts_with(verbs, "hfi1")) ? NicKind::kOmniPath
                                                                   : NicKind::kInfiniBand;
  } else {
    n.kind = NicKind::kEthernet;
  }
  n.high_speed = n.kind != NicKind::kEthernet;
  place(node, n);
  node.nics.push_back(std::move(n));
}

void read_cpus(hwloc_topology_t topo, Node& node) {
  const int npackages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  for (int i = 0; i < npackages; ++i) {
    hwloc_obj_t p = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    node.packages.push_back({os_index_of(p, i), to_cpuset(p->cpuset)});
  }
  if (node.packages.empty()) {
    // Some VMs expose no package level; one package holding everything keeps the model simple.
    node.packages.push_back({0, to_cpuset(hwloc_get_root_obj(topo)->cpuset)});
  }
  const int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nnuma; ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    CpuSet cpus = to_cpuset(n->cpuset);
    if (cpus.empty()) continue;  // memory-only (HBM, CXL, GPU memory): no cores to place ranks on
    NumaDomain d{os_index_of(n, i), node.packages.front().os_index, cpus};
    for (const auto& p : node.packages) {
      if (p.cpus.contains(cpus.first())) d.package = p.os_index;
    }
    node.numa.push_back(std::move(d));
  }
  if (node.numa.empty()) {
    node.numa.push_back(
        {0, node.packages.front().os_index, to_cpuset(hwloc_get_root_obj(topo)->cpuset)});
  }
  // Cores in logical order; a machine reporting PUs but no cores gets one core per PU.
  hwloc_obj_type_t unit = HWLOC_OBJ_CORE;
  if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) <= 0) unit = HWLOC_OBJ_PU;
  const int ncores = hwloc_get_nbobjs_by_type(topo, unit);
  for (int i = 0; i < ncores; ++i) {
    hwloc_obj_t c = hwloc_get_obj_by_type(topo, unit, static_cast<unsigned>(i));
    Core core{to_cpuset(c->cpuset), node.numa.front().os_index, node.packages.front().os_index};
    if (core.pus.empty()) continue;
    const int first = core.pus.first();
    for (const auto& n : node.numa) {
      if (n.cpus.contains(first)) core.numa = n.os_index;
    }
    for (const auto& p : node.packages) {
      if (p.cpus.contains(first)) core.package = p.os_index;
    }
    node.cores.push_back(std::move(core));
  }
}

void read_devices(hwloc_topology_t topo, Node& node) {
  // One PCI function carries several OS devices (cuda0 + nvml0 + opencl0d0; mlx5_0 + ib0): group
  // them by their PCI device, so each GPU and NIC is counted once.
  std::map<std::uint64_t, PciEntry> entries;  // by gp_index: stable across runs, unlike pointers
  for (hwloc_obj_t o = hwloc_get_next_osdev(topo, nullptr); o != nullptr;
       o = hwloc_get_next_osdev(topo, o)) {
    hwloc_obj_t pci = o->parent;
    while (pci != nullptr && pci->type == HWLOC_OBJ_OS_DEVICE) pci = pci->parent;
    if (pci == nullptr || pci->type != HWLOC_OBJ_PCI_DEVICE) continue;  // virtual: no PCI place
    auto& e = entries[pci->gp_index];
    e.pci = pci;
    e.osdevs.push_back(o);
  }
  for (hwloc_obj_t p = hwloc_get_next_pcidev(topo, nullptr); p != nullptr;
       p = hwloc_get_next_pcidev(topo, p)) {
    if (is_gpu_class(p->attr->pcidev.class_id, p->attr->pcidev.vendor_id)) {
      entries[p->gp_index].pci = p;
    }
  }
  for (const auto& [id, e] : entries) {
    const bool compute = std::any_of(e.osdevs.begin(), e.osdevs.end(), is_compute_osdev);
    const bool net = std::any_of(e.osdevs.begin(), e.osdevs.end(), [](hwloc_obj_t o) {
      return o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
             o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
    });
    if (compute || is_gpu_class(e.pci->attr->pcidev.class_id, e.pci->attr->pcidev.vendor_id)) {
      add_gpu(topo, e, node);
    } else if (net) {
      add_nic(topo, e, node);
    }
  }
  std::sort(node.gpus.begin(), node.gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.pci < b.pci; });
  std::sort(node.nics.begin(), node.nics.end(), [](const Nic& a, const Nic& b) {
    return a.pci != b.pci ? a.pci < b.pci : a.name < b.name;
  });
}

// An lstopo export is a few hundred KiB; the cap keeps a wrong file from being read whole.
constexpr std::size_t kMaxXmlBytes = 64u << 20;

// hwloc sizes its bitmaps by the largest index it meets: one os_index="99999999999999999999" (read
// as 4294967295) cost 0.78 s and 1 GB before anything could be said about the file. Linux numbers
// CPUs below 8192 (NR_CPUS) and NUMA nodes below 1024, so indexes past this bound are refused
// before hwloc reads the file.
constexpr long long kMaxOsIndex = (1 << 20) - 1;

// The value of the attribute whose name starts at `at` in an XML tag (name="value" or
// name='value'), and nothing when `at` starts no such attribute.
std::optional<std::string_view> attribute_value(std::string_view text, std::size_t at,
                                                std::string_view name) {
  auto space = [&](std::size_t i) {
    return i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0;
  };
  if (at == 0 || !space(at - 1) || text.substr(at, name.size()) != name) return std::nullopt;
  std::size_t i = at + name.size();
  while (space(i)) ++i;
  if (i >= text.size() || text[i] != '=') return std::nullopt;
  ++i;
  while (space(i)) ++i;
  if (i >= text.size() || (text[i] != '"' && text[i] != '\'')) return std::nullopt;
  const std::size_t end = text.find(text[i], i + 1);
  if (end == std::string_view::npos) return std::nullopt;  // hwloc reports the broken file
  return text.substr(i + 1, end - i - 1);
}

// The checks hwloc cannot make cheaply or quietly, on the text before hwloc reads it.
void check_xml_text(const std::string& path, std::string_view text) {
  const auto line_of = [&](std::size_t at) {
    return std::to_string(1 + std::count(text.begin(), text.begin() + at, '\n'));
  };
  // A file that is not well-formed XML (a flipped bit, a truncated copy): hwloc would say only
  // "Invalid argument", or its fallback parser would read a part of it.
  if (const auto fault = xml_fault(text)) {
    throw TopologyError("dtrain: topology: " + path +
                        (fault->line > 0 ? ":" + std::to_string(fault->line) : std::string()) +
                        ": not well-formed XML: " + fault->message +
                        "; expected an hwloc XML export (lstopo --of xml)");
  }
  static constexpr std::string_view kOsIndex = "os_index";
  for (std::size_t at = text.find(kOsIndex); at != std::string_view::npos;
       at = text.find(kOsIndex, at + 1)) {
    const auto value = attribute_value(text, at, kOsIndex);
    if (!value || parse_whole_number(*value, 0, kMaxOsIndex)) continue;
    const bool printable = value->size() <= 40 &&
                           std::all_of(value->begin(), value->end(),
                                       [](char c) { return c >= 0x20 && c < 0x7f && c != '"'; });
    throw TopologyError("dtrain: topology: " + path + ":" + line_of(at) +
                        ": os_index: expected an index from 0 to " + std::to_string(kMaxOsIndex) +
                        " (Linux numbers CPUs and NUMA nodes far below that), got " +
                        (printable ? "\"" + std::string(*value) + "\""
                                   : "a value of " + std::to_string(value->size()) + " bytes"));
  }
  // A whole export without a PU or a NUMA node: hwloc refuses it, but prints "hwloc: Topology does
  // not contain any NUMA node, aborting!" to stderr first (a truncated file is hwloc's to report).
  const auto has_object = [&](std::string_view type) {
    const std::string quoted = std::string(type);
    return text.find("type=\"" + quoted + "\"") != std::string_view::npos ||
           text.find("type='" + quoted + "'") != std::string_view::npos;
  };
  if (text.find("</topology>") != std::string_view::npos) {
    for (const char* type : {"PU", "NUMANode"}) {
      if (has_object(type)) continue;
      throw TopologyError("dtrain: topology: " + path + ": no " + type +
                          " object; expected an hwloc XML export (lstopo --of xml) with at "
                          "least one PU and one NUMANode, got none of type " +
                          type);
    }
  }
  // hwloc refuses a topology whose allowed cpuset (the root object's) is empty, but prints
  // "hwloc: Topology does not contain any PU, aborting!" to stderr first; the common case, an
  // export made where no PU of the machine's was allowed, is recognised here.
  const std::size_t root = text.find("<object");
  const std::size_t root_end = text.find('>', root);
  const auto root_bitmap_is_empty = [&](std::string_view name) -> std::optional<bool> {
    for (std::size_t at = text.find(name, root); root != std::string_view::npos && at < root_end;
         at = text.find(name, at + 1)) {
      if (const auto value = attribute_value(text, at, name)) {
        return value->find_first_not_of("0x,") == std::string_view::npos;
      }
    }
    return std::nullopt;
  };
  if (root_bitmap_is_empty("cpuset") == false && root_bitmap_is_empty("allowed_cpuset") == true) {
    throw TopologyError("dtrain: topology: " + path +
                        ": no cores found; expected at least one allowed core or PU, got an "
                        "empty allowed cpuset");
  }
}

// hwloc refuses a topology whose allowed cpuset is empty ("does not contain any PU"); loading it
// again with the disallowed PUs included tells that case apart from a malformed file.
bool loads_with_disallowed(const std::string& xml) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return false;
  TopologyPtr topo(raw);
  return hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) == 0 &&
         hwloc_topology_set_xmlbuffer(raw, xml.c_str(), static_cast<int>(xml.size() + 1)) == 0 &&
         hwloc_topology_load(raw) == 0;
}

// The file's text, read without blocking on a FIFO or reading /dev/zero without end (hwloc would,
// opening the path itself), then checked.
std::string read_xml(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path, "a readable hwloc XML file", kMaxXmlBytes);
  } catch (const InputFileError& e) {
    throw InputFileError("dtrain: topology: " + std::string(e.what()).substr(8));
  }
  check_xml_text(path, text);
  return text;
}

Node load(Source source, const std::string& input, LiveDiscovery discovery = LiveDiscovery::kFull) {
  const std::string name = source == Source::kLive        ? std::string("this machine")
                           : source == Source::kSynthetic ? "synthetic topology \"" + input + "\""
                                                          : input;
  const std::string xml = source == Source::kXml ? read_xml(input) : std::string();
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    throw TopologyError("dtrain: topology: " + name +
                        ": hwloc_topology_init failed: " + std::strerror(errno));
  }
  TopologyPtr topo(raw);
  // Bridges and PCI devices are filtered out by default; the NIC choice needs the PCI tree.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (discovery == LiveDiscovery::kWithoutGpuRuntimes) {
    // Each of these opens a GPU runtime in this process when its plugin is installed (Debian's
    // libhwloc-plugins ships opencl and gl). A name hwloc does not know is accepted and ignored.
    for (const char* component : {"opencl", "cuda", "nvml", "rsmi", "levelzero", "gl"}) {
      hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component);
    }
  }
  // The size counts the terminating NUL, as hwloc_topology_export_xmlbuffer() gives it.
  if (source == Source::kXml &&
      hwloc_topology_set_xmlbuffer(raw, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0) {
    throw TopologyError("dtrain: topology: " + input + ": hwloc cannot use it: " +
                        std::strerror(errno) + "; expected an hwloc XML file");
  }
  if (source == Source::kSynthetic && hwloc_topology_set_synthetic(raw, input.c_str()) != 0) {
    throw TopologyError("dtrain: topology: " + name +
                        ": not a valid description; expected e.g. \"package:2 core:4 pu:2\"");
  }
  if (hwloc_topology_load(raw) != 0) {
    if (source == Source::kXml && loads_with_disallowed(xml)) {
      throw TopologyError("dtrain: topology: " + name +
                          ": no cores found; expected at least one allowed core or PU, got an "
                          "empty allowed cpuset");
    }
    throw TopologyError("dtrain: topology: " + name +
                        ": hwloc could not load it; expected an hwloc v2 XML export (lstopo "
                        "--of xml) with at least one PU, got a file hwloc rejects");
  }
  Node node;
  node.source = name;
  // An XML or synthetic topology describes some other machine even when HWLOC_THISSYSTEM=1 says
  // otherwise: never let it bind this one.
  node.is_this_machine = source == Source::kLive && hwloc_topology_is_thissystem(raw) != 0;
  read_cpus(raw, node);
  if (node.cores.empty()) {
    throw TopologyError("dtrain: topology: " + name +
                        ": no cores found; expected at least one core or PU");
  }
  read_devices(raw, node);
  if (source == Source::kLive) fit_nics_to_namespace(node, namespace_interfaces());
  return node;
}

}  // namespace

Node load_live_node(LiveDiscovery discovery) { return load(Source::kLive, {}, discovery); }
Node load_node_xml(const std::string& path) { return load(Source::kXml, path); }
Node load_node_synthetic(const std::string& description) {
  return load(Source::kSynthetic, description);
}

std::string hwloc_runtime_version() {
  // hwloc_get_api_version() is the API level (2.8.0 for every 2.8.x and 2.9.x library), not the
  // release. The release is the HWLOC_VERSION that the loaded library was compiled with, and it
  // records that on the root object of every topology it builds: a one-PU synthetic topology reads
  // it without probing the machine.
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) == 0) {
    const TopologyPtr topo(raw);
    if (hwloc_topology_set_synthetic(raw, "pu:1") == 0 && hwloc_topology_load(raw) == 0) {
      const char* version = hwloc_obj_get_info_by_name(hwloc_get_root_obj(raw), "hwlocVersion");
      if (version != nullptr && *version != '\0') return version;
    }
  }
  const unsigned v = hwloc_get_api_version();
  return "API " + std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
         std::to_string(v & 0xff);
}

}  // namespace dtrain::affinity
