// A node's shape as a plain value: packages, NUMA domains, cores and their PUs, GPUs and NICs with
// their PCI place and CPU locality. Loaded from hwloc (topology_hwloc.cpp, the only hwloc.h user),
// live or from an `lstopo` XML export, or built by hand in tests; the solver (affinity.hpp) works
// on this value only, so it never needs hwloc and is tested on hand-made nodes as well as real
// ones.
//
// Numbering: NUMA domains and packages are named by their physical index (hwloc os_index, "P#",
// what numactl and lstopo --physical print); PUs by the Linux CPU number; cores by their position
// in `Node::cores` (hwloc's logical order, which follows the topology tree); GPUs by their position
// in `Node::gpus`, sorted by PCI bus id = the CUDA index under CUDA_DEVICE_ORDER=PCI_BUS_ID.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "affinity/cpuset.hpp"
#include "affinity/errors.hpp"

namespace dtrain::affinity {

// A PCI address domain:bus:device.function, printed in full "dddd:bb:dd.f" form (lower-case hex),
// which is what NVML, CUDA_VISIBLE_DEVICES' PCI form and lspci -D print.
struct PciId {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  std::uint32_t function = 0;

  // Accepts "dddd:bb:dd.f" and the short "bb:dd.f" (domain 0); nullopt for anything else.
  static std::optional<PciId> parse(std::string_view text);
  std::string to_string() const;
  auto operator<=>(const PciId&) const = default;
};

struct Package {
  int os_index = 0;
  CpuSet cpus;
};

struct NumaDomain {
  int os_index = 0;
  int package = 0;  // os_index of the package holding it
  CpuSet cpus;      // only domains with PUs are kept (memory-only nodes such as HBM/CXL are not)
};

struct Core {
  CpuSet pus;  // its hardware threads; a rank gets whole cores, never half of one
  int numa = 0;
  int package = 0;
};

// Where a PCI device sits: what the PCI distance between a GPU and a NIC is computed from.
struct PciDevice {
  PciId pci;
  std::uint32_t vendor_id = 0;  // PCI vendor, e.g. 0x10de NVIDIA, 0x15b3 Mellanox
  std::uint32_t device_id = 0;
  std::uint32_t pci_class = 0;  // e.g. 0x0302 3D controller, 0x0207 InfiniBand
  CpuSet locality;              // the PUs closest to it (its nearest non-I/O ancestor in hwloc)
  int numa = -1;                // os_index of the NUMA domain holding locality's first PU
  int package = -1;             // os_index of the package holding locality's first PU
  // The PCI path, as ids unique within one node (hwloc gp_index): the host bridge (-1 if the
  // export has none) and the PCI-to-PCI bridges below it, top first. Two devices below one
  // PCI-to-PCI bridge share a switch (or root port); below one host bridge they share a root
  // complex.
  std::int64_t host_bridge = -1;
  std::vector<std::int64_t> bridges;
};

enum class GpuVendor { kNvidia, kAmd, kIntel, kOther };

struct Gpu : PciDevice {
  GpuVendor vendor = GpuVendor::kOther;
  std::string name;                   // e.g. "Tesla V100-SXM2-16GB"; may be empty
  std::vector<std::string> os_names;  // hwloc OS devices: cuda0, nvml0, rsmi4, opencl0d0...
};

enum class NicKind {
  kInfiniBand,  // an RDMA verbs device (InfiniBand, or RoCE): NCCL_IB_HCA, UCX_NET_DEVICES
  kOmniPath,    // Intel/Cornelis Omni-Path hfi1: also used through verbs
  kSlingshot,   // HPE Slingshot (Cassini): addressed by its network interface
  kEthernet,    // plain sockets: NCCL_SOCKET_IFNAME
};

struct Nic : PciDevice {
  NicKind kind = NicKind::kEthernet;
  std::string name;    // what the fabric libraries want: mlx5_0, hfi1_0, hsn0, eth0
  std::string netdev;  // the kernel network interface (ib0, hsi0, eth0); may be empty
  // A high-speed fabric NIC (anything but plain Ethernet). When a node has any, plain Ethernet
  // ports are management networks and never chosen for training traffic.
  bool high_speed = false;
};

struct Node {
  std::string source;            // "this machine" or the XML path: named in every error
  bool is_this_machine = false;  // false for an XML file: never bind the real machine from it
  std::vector<Package> packages;
  std::vector<NumaDomain> numa;  // topology order
  std::vector<Core> cores;       // topology order
  std::vector<Gpu> gpus;         // sorted by PCI bus id
  std::vector<Nic> nics;         // sorted by PCI bus id, then name

  CpuSet all_pus() const;
  const NumaDomain* find_numa(int os_index) const;
  const Package* find_package(int os_index) const;
  // The NUMA domains (os_index, topology order) whose PUs intersect `cpus`.
  std::vector<int> numa_of(const CpuSet& cpus) const;
};

// How far apart two PCI devices are, nearest first: the ladder used to pick a GPU's NIC.
enum class PciDistance {
  kSameSwitch = 0,      // below one PCI-to-PCI bridge (a PCIe switch or root port)
  kSameHostBridge = 1,  // below one host bridge (root complex), different root ports
  kSameNuma = 2,        // localities share a NUMA domain
  kSamePackage = 3,     // localities share a package
  kCrossPackage = 4,
};

PciDistance pci_distance(const Node& node, const PciDevice& a, const PciDevice& b);
// Distance from a set of CPUs (a rank without a GPU) to a device: the NUMA rungs only.
PciDistance cpu_distance(const Node& node, const CpuSet& cpus, const PciDevice& device);

std::string_view to_string(GpuVendor vendor);
std::string_view to_string(NicKind kind);
std::string_view to_string(PciDistance distance);

// Loaders (topology_hwloc.cpp). They throw TopologyError naming the source: a missing or
// malformed file, or a topology without cores.
// Which hwloc discovery a live load may use.
enum class LiveDiscovery {
  kFull,  // every component hwloc has: PCI plus the GPU runtimes' (OpenCL, CUDA, NVML, RSMI...)
  // Without the GPU runtimes' components: GPUs are still found as PCI devices, but no GPU driver
  // is loaded into the calling process. For a process that has yet to set CUDA_VISIBLE_DEVICES
  // for itself: a driver initialised now (hwloc's OpenCL component starts NVIDIA's) would never
  // see it.
  kWithoutGpuRuntimes,
};
Node load_live_node(LiveDiscovery discovery = LiveDiscovery::kFull);
// The release of the hwloc library loaded at run time, e.g. "2.9.0" (read from a topology's
// hwlocVersion info; "API 2.8.0" from hwloc_get_api_version() if a library lacks it).
std::string hwloc_runtime_version();
Node load_node_xml(const std::string& path);
// An hwloc synthetic description such as "package:2 numa:2 core:4 pu:2" (CPU only, no devices),
// for tests and experiments.
Node load_node_synthetic(const std::string& description);

// The counts the planner needs; kept as the small summary the CLI's site resolver uses.
struct NodeSummary {
  int packages = 0;
  int numa_domains = 0;
  int cores = 0;
  int pus = 0;
  bool is_this_machine = false;  // false for an XML file: never bind the real machine from it
};

NodeSummary summarize(const Node& node);
NodeSummary load_live_topology();
NodeSummary load_topology_xml(const std::string& path);

}  // namespace dtrain::affinity
