// The hwloc loader on the real exports: every GPU/NIC locality listed in
// tests/fixtures/topologies/expected-locality.tsv (hwloc-calc's answers, see ../shared/topologies/
// README.md), the device classification, the PCI distance ladder, and the bad-input messages.
#include "affinity/topology.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fixtures.hpp"

namespace dtrain::affinity {
namespace {

using testing::fixture;
using testing::fixture_path;
using testing::gpu_by_os_name;
using testing::nic_index;

TEST(Topology, LoadsRealXmlExports) {
  // Counts from `hwloc-info --input FILE` (tests/fixtures/topologies/SOURCE.md).
  const NodeSummary pascal = load_topology_xml(DTRAIN_FIXTURE_DIR "/topologies/pascal-2xp100.xml");
  EXPECT_EQ(pascal.packages, 2);
  EXPECT_EQ(pascal.numa_domains, 2);
  EXPECT_EQ(pascal.cores, 36);
  EXPECT_EQ(pascal.pus, 72);
  EXPECT_FALSE(pascal.is_this_machine);
  const NodeSummary quartz = load_topology_xml(DTRAIN_FIXTURE_DIR "/topologies/quartz-nogpu.xml");
  EXPECT_EQ(quartz.cores, 36);
  EXPECT_EQ(quartz.pus, 36);
}

TEST(Topology, CountsOfEveryFixture) {
  struct Expected {
    const char* file;
    int packages, numa, cores, pus;
    std::size_t gpus, nics;
  };
  // packages / NUMA / cores / PUs from the README's summary table; NICs include management ports.
  const Expected table[] = {
      {"dgx2-16xv100-trimmed.xml", 2, 2, 4, 4, 16, 0},
      {"lassen-power9-4xv100.xml", 2, 2, 40, 160, 4, 6},
      {"tioga-cray-ex235a-8xmi250x.xml", 1, 4, 64, 128, 8, 5},
      {"pascal-2xp100.xml", 2, 2, 36, 72, 2, 3},
      {"quartz-nogpu.xml", 2, 2, 36, 36, 0, 5},
      {"polaris-like-4xa100.xml", 1, 4, 32, 64, 4, 3},
  };
  for (const auto& e : table) {
    SCOPED_TRACE(e.file);
    const Node& node = fixture(e.file);
    const NodeSummary s = summarize(node);
    EXPECT_EQ(s.packages, e.packages);
    EXPECT_EQ(s.numa_domains, e.numa);
    EXPECT_EQ(s.cores, e.cores);
    EXPECT_EQ(s.pus, e.pus);
    EXPECT_EQ(node.gpus.size(), e.gpus);
    EXPECT_EQ(node.nics.size(), e.nics);
    EXPECT_FALSE(node.is_this_machine);
    for (std::size_t i = 1; i < node.gpus.size(); ++i) {
      EXPECT_LT(node.gpus[i - 1].pci, node.gpus[i].pci) << "GPUs are in PCI bus id order";
    }
  }
}

// Every GPU/CoProc/Network/OpenFabrics row of expected-locality.tsv, checked on our model.
TEST(Topology, MatchesHwlocCalcForEveryDevice) {
  std::ifstream in(fixture_path("expected-locality.tsv"));
  ASSERT_TRUE(in) << "expected-locality.tsv missing";
  std::string line;
  std::getline(in, line);  // header
  int rows = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, '\t');) f.push_back(cell);
    ASSERT_GE(f.size(), 10U) << line;
    const std::string& file = f[0];
    const std::string& osdev = f[1];
    const std::string& type = f[2];
    SCOPED_TRACE(file + " " + osdev);
    const Node& node = fixture(file);
    const PciDevice* dev = nullptr;
    if (type == "gpu" || type == "coproc") {
      const Gpu& g = gpu_by_os_name(node, osdev);
      dev = &g;
    } else {
      const int n = nic_index(node, osdev);
      ASSERT_GE(n, 0);
      const Nic& nic = node.nics[static_cast<std::size_t>(n)];
      if (type == "openfabrics") {
        EXPECT_EQ(nic.name, osdev) << "verbs name is the NIC's name";
      }
      dev = &nic;
    }
    EXPECT_EQ(dev->pci.to_string(), f[4]);
    char vendor_device[16];
    std::snprintf(vendor_device, sizeof vendor_device, "%04x:%04x", dev->vendor_id, dev->device_id);
    EXPECT_EQ(vendor_device, f[5]);
    EXPECT_EQ(dev->pci_class, std::stoul(f[6], nullptr, 16));
    EXPECT_EQ(dev->package, std::stoi(f[7]));
    EXPECT_EQ(dev->numa, std::stoi(f[8]));
    EXPECT_EQ(dev->locality, CpuSet::parse(f[9])) << dev->locality.to_list() << " vs " << f[9];
    ++rows;
  }
  // Every row of the file (its README announces 111; the file itself holds these 63).
  EXPECT_EQ(rows, 63);
}

TEST(Topology, PolarisLikeMatchesAlcfsAffinityTable) {
  // docs/polaris/index.md: GPU0<->NUMA 3 (24-31,56-63) ... GPU3<->NUMA 0 (0-7,32-39).
  const Node& node = fixture("polaris-like-4xa100.xml");
  const std::vector<std::string> cpus{"24-31,56-63", "16-23,48-55", "8-15,40-47", "0-7,32-39"};
  for (int i = 0; i < 4; ++i) {
    const auto& g = node.gpus[static_cast<std::size_t>(i)];
    EXPECT_EQ(g.numa, 3 - i);
    EXPECT_EQ(g.locality.to_list(), cpus[static_cast<std::size_t>(i)]);
    EXPECT_EQ(g.vendor, GpuVendor::kNvidia);
    EXPECT_EQ(g.name, "NVIDIA A100-SXM4-40GB");
  }
  const auto& mlx5_0 = node.nics[static_cast<std::size_t>(nic_index(node, "mlx5_0"))];
  const auto& mlx5_1 = node.nics[static_cast<std::size_t>(nic_index(node, "mlx5_1"))];
  EXPECT_EQ(pci_distance(node, node.gpus[3], mlx5_0), PciDistance::kSameHostBridge);
  EXPECT_EQ(pci_distance(node, node.gpus[1], mlx5_1), PciDistance::kSameHostBridge);
  EXPECT_EQ(pci_distance(node, node.gpus[0], mlx5_0), PciDistance::kSamePackage);
  EXPECT_EQ(pci_distance(node, node.gpus[0], mlx5_1), PciDistance::kSamePackage);
  EXPECT_EQ(mlx5_0.netdev, "hsn0");
}

TEST(Topology, DeviceClassification) {
  // One GPU per PCI function even with cuda0 + nvml0 + opencl0d0 on it; the BMC's ASPEED VGA is
  // not a GPU, nor are the DGX-2's NVSwitches.
  const Node& pascal = fixture("pascal-2xp100.xml");
  ASSERT_EQ(pascal.gpus.size(), 2U);
  EXPECT_EQ(pascal.gpus[0].os_names, (std::vector<std::string>{"cuda0", "nvml0", "opencl0d0"}));
  EXPECT_EQ(pascal.gpus[0].name, "Tesla P100-PCIE-16GB");
  EXPECT_EQ(fixture("dgx2-16xv100-trimmed.xml").gpus.size(), 16U);
  EXPECT_EQ(fixture("tioga-cray-ex235a-8xmi250x.xml").gpus[0].vendor, GpuVendor::kAmd);

  // NIC kinds and which are fabric NICs.
  const auto kind = [](const Node& node, const std::string& name) {
    return node.nics[static_cast<std::size_t>(nic_index(node, name))].kind;
  };
  const auto fast = [](const Node& node, const std::string& name) {
    return node.nics[static_cast<std::size_t>(nic_index(node, name))].high_speed;
  };
  EXPECT_EQ(kind(pascal, "mlx5_0"), NicKind::kInfiniBand);
  EXPECT_EQ(pascal.nics[static_cast<std::size_t>(nic_index(pascal, "mlx5_0"))].netdev, "hsi0");
  EXPECT_EQ(kind(pascal, "enp12s0f0"), NicKind::kEthernet);
  EXPECT_FALSE(fast(pascal, "enp12s0f0"));
  const Node& tioga = fixture("tioga-cray-ex235a-8xmi250x.xml");
  EXPECT_EQ(kind(tioga, "hsi0"), NicKind::kSlingshot);
  EXPECT_TRUE(fast(tioga, "hsi0"));
  EXPECT_EQ(kind(tioga, "ens2"), NicKind::kEthernet);
  const Node& quartz = fixture("quartz-nogpu.xml");
  EXPECT_EQ(kind(quartz, "hfi1_0"), NicKind::kOmniPath);
  EXPECT_EQ(kind(quartz, "eno1"), NicKind::kEthernet);
}

TEST(Topology, PciDistanceLadderOnRealNodes) {
  // The README's "closest HSN NIC for a GPU" column, rung by rung.
  const Node& pascal = fixture("pascal-2xp100.xml");
  const auto& mlx = pascal.nics[static_cast<std::size_t>(nic_index(pascal, "mlx5_0"))];
  EXPECT_EQ(pci_distance(pascal, pascal.gpus[0], mlx), PciDistance::kSameSwitch);
  EXPECT_EQ(pci_distance(pascal, pascal.gpus[1], mlx), PciDistance::kSameSwitch);

  const Node& tioga = fixture("tioga-cray-ex235a-8xmi250x.xml");
  const auto& hsi0 = tioga.nics[static_cast<std::size_t>(nic_index(tioga, "hsi0"))];
  EXPECT_EQ(pci_distance(tioga, gpu_by_os_name(tioga, "rsmi1"), hsi0),
            PciDistance::kSameHostBridge);
  EXPECT_EQ(pci_distance(tioga, gpu_by_os_name(tioga, "rsmi0"), hsi0), PciDistance::kSameNuma);
  EXPECT_EQ(pci_distance(tioga, gpu_by_os_name(tioga, "rsmi4"), hsi0), PciDistance::kSamePackage);

  const Node& lassen = fixture("lassen-power9-4xv100.xml");
  const auto& mlx5_0 = lassen.nics[static_cast<std::size_t>(nic_index(lassen, "mlx5_0"))];
  EXPECT_EQ(pci_distance(lassen, lassen.gpus[0], mlx5_0), PciDistance::kSameNuma);
  EXPECT_EQ(pci_distance(lassen, lassen.gpus[2], mlx5_0), PciDistance::kCrossPackage);
}

TEST(Topology, LassenKeepsPhysicalIndices) {
  // Packages and NUMA nodes P#0 and P#8; NUMA 0 starts at PU 8.
  const Node& node = fixture("lassen-power9-4xv100.xml");
  ASSERT_EQ(node.numa.size(), 2U);
  EXPECT_EQ(node.numa[1].os_index, 8);
  EXPECT_EQ(node.numa[1].package, 8);
  EXPECT_EQ(node.numa[0].cpus.to_list(), "8-87");
  EXPECT_EQ(node.cores.front().pus.to_list(), "8-11");  // SMT4: a core's threads together
}

TEST(Topology, SyntheticDescriptions) {
  const Node node = load_node_synthetic("package:2 numa:2 core:4 pu:2");
  EXPECT_EQ(node.packages.size(), 2U);
  EXPECT_EQ(node.numa.size(), 4U);
  EXPECT_EQ(node.cores.size(), 16U);
  EXPECT_EQ(node.all_pus().count(), 32);
  EXPECT_FALSE(node.is_this_machine);
  EXPECT_TRUE(node.gpus.empty());
  EXPECT_THROW(load_node_synthetic("bogus:3"), TopologyError);
}

TEST(Topology, LiveMachineHasCores) {
  const NodeSummary live = load_live_topology();
  EXPECT_GE(live.cores, 1);
  EXPECT_TRUE(live.is_this_machine);
  const Node node = load_live_node();
  EXPECT_EQ(node.source, "this machine");
  EXPECT_FALSE(node.cores.empty());
}

// `dtrain doctor` printed hwloc_get_api_version() (2.8.0) as the version of an hwloc 2.9.0
// library; the release must match the hwloc.pc this build was configured against.
TEST(Topology, RuntimeVersionIsTheLibraryRelease) {
  EXPECT_EQ(hwloc_runtime_version(), DTRAIN_TEST_HWLOC_PC_VERSION);
}

std::string error_of(const std::string& path) {
  try {
    load_node_xml(path);
  } catch (const InputError& e) {  // a TopologyError, or an InputFileError for the file itself
    return e.what();
  }
  return "no error";
}

// hwloc opens the path itself: a FIFO blocked `dtrain plan --topology` forever and /dev/zero was
// read without end.
TEST(Topology, SpecialFilesAreRefusedWithoutBlocking) {
  char dir_template[] = "/tmp/dtrain-topo-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string fifo = dir + "/node.xml";
  const std::string zero = dir + "/zero.xml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(symlink("/dev/zero", zero.c_str()), 0);
  EXPECT_EQ(error_of(fifo), "dtrain: topology: " + fifo +
                                ": expected a readable hwloc XML file, got a "
                                "FIFO (named pipe)");
  EXPECT_EQ(error_of(zero), "dtrain: topology: " + zero +
                                ": expected a readable hwloc XML file, got a "
                                "character device");
  unlink(fifo.c_str());
  unlink(zero.c_str());
  rmdir(dir.c_str());
}

TEST(Topology, BadFilesAreNamedInTheError) {
  EXPECT_EQ(error_of("/nonexistent/topo.xml"),
            "dtrain: topology: /nonexistent/topo.xml: cannot open it: No such file or directory; "
            "expected a readable hwloc XML file");
  const std::string source_md = DTRAIN_FIXTURE_DIR "/topologies/SOURCE.md";
  EXPECT_EQ(error_of(source_md), "dtrain: topology: " + source_md +
                                     ":1: not well-formed XML: Start tag expected, '<' not found; "
                                     "expected an hwloc XML export (lstopo --of xml)");
  const std::string truncated = fixture_path("bad/truncated.xml");
  EXPECT_NE(error_of(truncated).find("dtrain: topology: " + truncated + ":"), std::string::npos)
      << error_of(truncated);
  EXPECT_NE(error_of(truncated).find(": not well-formed XML: "), std::string::npos)
      << error_of(truncated);
  const std::string no_pu = fixture_path("bad/no-pu.xml");
  EXPECT_EQ(error_of(no_pu), "dtrain: topology: " + no_pu +
                                 ": no PU object; expected an hwloc XML export (lstopo --of xml) "
                                 "with at least one PU and one NUMANode, got none of type PU");
  const std::string no_allowed = fixture_path("bad/no-allowed-pu.xml");
  EXPECT_EQ(error_of(no_allowed),
            "dtrain: topology: " + no_allowed +
                ": no cores found; expected at least one allowed core or PU, got an empty allowed "
                "cpuset");
}

// Issue 45 item 8: a bit flipped in a real export (a quote become 0xa2) said only "hwloc cannot
// use it: Invalid argument"; the line and the fault are named.
TEST(Topology, AFileThatIsNotWellFormedXmlIsNamedWithItsLine) {
  std::ifstream in(fixture_path("polaris-like-4xa100.xml"));
  std::stringstream original;
  original << in.rdbuf();
  std::string text = original.str();
  const std::size_t at = text.find("pci_busid=\"0000:85:00.0\"");
  ASSERT_NE(at, std::string::npos);
  text[at + 10] = '\xa2';
  const std::string line = std::to_string(1 + std::count(text.begin(), text.begin() + at, '\n'));
  char dir_template[] = "/tmp/dtrain-topo-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/flipped.xml";
  std::ofstream(path) << text;
  EXPECT_EQ(error_of(path), "dtrain: topology: " + path + ":" + line +
                                ": not well-formed XML: AttValue: \" or ' expected; expected an "
                                "hwloc XML export (lstopo --of xml)");
  std::filesystem::remove_all(dir_template);
}

// A whole export without a NUMA node: hwloc printed "hwloc: Topology does not contain any NUMA
// node, aborting!" (twice) before dtrain's message; it is refused before hwloc reads it.
TEST(Topology, AnExportWithoutANumaNodeIsRefusedBeforeHwlocPrintsAnything) {
  char dir_template[] = "/tmp/dtrain-topo-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/node.xml";
  std::ofstream(path) << "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
                         "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\">\n"
                         "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/>\n"
                         "  </object>\n</topology>\n";
  ::testing::internal::CaptureStderr();
  const std::string error = error_of(path);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(error, "dtrain: topology: " + path +
                       ": no NUMANode object; expected an hwloc XML export (lstopo --of xml) with "
                       "at least one PU and one NUMANode, got none of type NUMANode");
  std::filesystem::remove_all(dir_template);
}

// hwloc sizes its bitmaps by the largest os_index: one absurd index cost 0.78 s and 1 GB before
// hwloc gave up; it is refused before hwloc reads the file, naming its line.
TEST(Topology, AbsurdOsIndexesAreRefusedBeforeHwlocReadsThem) {
  std::ifstream in(fixture_path("bad/no-allowed-pu.xml"));
  std::stringstream original;
  original << in.rdbuf();
  std::string text = original.str();
  text.replace(text.find("allowed_cpuset=\"0x0\""), 20, "allowed_cpuset=\"0x3\"");
  const std::string pu = "<object type=\"PU\" os_index=\"1\"";
  const std::size_t at = text.find(pu);
  ASSERT_NE(at, std::string::npos);
  char dir_template[] = "/tmp/dtrain-topo-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/node.xml";
  const auto with_index = [&](const std::string& value) {
    std::string xml = text;
    xml.replace(at, pu.size(), "<object type=\"PU\" os_index=\"" + value + "\"");
    std::ofstream(path) << xml;
    return error_of(path);
  };
  EXPECT_EQ(with_index("1"), "no error");
  EXPECT_EQ(with_index("1048575"), "no error");
  for (const std::string value : {"99999999999999999999", "4294967295", "1048576", "-1", " 1"}) {
    EXPECT_EQ(with_index(value),
              "dtrain: topology: " + path +
                  ":16: os_index: expected an index from 0 to 1048575 (Linux numbers CPUs and NUMA "
                  "nodes far below that), got \"" +
                  value + "\"");
  }
  unlink(path.c_str());
  rmdir(dir_template);
}

// hwloc prints "hwloc: Topology does not contain any PU, aborting!" to stderr before failing: the
// user gets dtrain's message alone.
TEST(Topology, AnEmptyAllowedCpusetGetsOnlyDtrainsMessage) {
  const std::string no_allowed = fixture_path("bad/no-allowed-pu.xml");
  ::testing::internal::CaptureStderr();
  const std::string error = error_of(no_allowed);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(error, "dtrain: topology: " + no_allowed +
                       ": no cores found; expected at least one allowed core or PU, got an empty "
                       "allowed cpuset");
}

TEST(PciId, ParseAndFormat) {
  auto id = PciId::parse("0035:03:00.0");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->domain, 0x35U);
  EXPECT_EQ(id->to_string(), "0035:03:00.0");
  EXPECT_EQ(PciId::parse("c1:00.1")->to_string(), "0000:c1:00.1");
  EXPECT_FALSE(PciId::parse("c1:00"));
  EXPECT_FALSE(PciId::parse("0000:zz:00.0"));
  EXPECT_LT(*PciId::parse("0004:05:00.0"), *PciId::parse("0035:03:00.0"));
}

}  // namespace
}  // namespace dtrain::affinity
