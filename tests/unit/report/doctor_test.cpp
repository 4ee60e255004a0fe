#include "report/doctor.hpp"

#include <gtest/gtest.h>

namespace dtrain::report {
namespace {

RankReport rank(int r, std::string host, std::string cpus, std::string gpu_pci,
                std::string gpu_cpus) {
  RankReport report;
  report.rank = r;
  report.size = 2;
  report.local_rank = r;
  report.local_size = 2;
  report.host = std::move(host);
  report.launcher = "openmpi";
  report.cpuset = std::move(cpus);
  if (!gpu_pci.empty()) report.gpus.push_back({gpu_pci, "A100", gpu_cpus, 0});
  report.nics = {"mlx5_0", "mlx5_1"};
  report.netdevs = {"lo", "eth0", "ib0"};
  report.env = {{"MASTER_ADDR", "x1"}, {"MASTER_PORT", "61000"}};
  return report;
}

TEST(Doctor, AWellWiredJobHasNoWarnings) {
  auto a = rank(0, "x1", "0-7", "0000:07:00.0", "0-15");
  auto b = rank(1, "x1", "8-15", "0000:46:00.0", "0-15");
  a.env["NCCL_IB_HCA"] = "=mlx5_0";
  b.env["UCX_NET_DEVICES"] = "mlx5_1:1";
  b.env["NCCL_SOCKET_IFNAME"] = "eth";
  EXPECT_EQ(doctor_warnings({a, b}), std::vector<std::string>{});
}

TEST(Doctor, NamesEachMistake) {
  auto a = rank(0, "x1", "0-7", "0000:07:00.0", "16-31");
  auto b = rank(1, "x1", "4-11", "0000:07:00.0", "16-31");
  auto c = rank(2, "x2", "0-3", "", "");
  a.env["NCCL_IB_HCA"] = "=mlx5_4";
  c.env["NCCL_SOCKET_IFNAME"] = "=hsn0";
  c.env["MASTER_PORT"] = "61001";
  c.master_port_in_use = true;
  const std::vector<std::string> expected = {
      "ranks 0 and 1 on x1 share GPU 0000:07:00.0; expected one GPU per rank (check "
      "CUDA_VISIBLE_DEVICES or the affinity policy)",
      "ranks 0 and 1 on x1 have overlapping cpusets 0-7 and 4-11 (shared 4-7); expected disjoint "
      "cores per rank",
      "rank 0 on x1 runs on cores 0-7, none of them near its GPU 0000:07:00.0 (near: 16-31); "
      "expected cores in the GPU's NUMA domain",
      "rank 0 on x1: NCCL_IB_HCA names mlx5_4, which this node does not have; expected one of: "
      "mlx5_0, mlx5_1",
      "rank 1 on x1 runs on cores 4-11, none of them near its GPU 0000:07:00.0 (near: 16-31); "
      "expected cores in the GPU's NUMA domain",
      "rank 2 on x2: NCCL_SOCKET_IFNAME names hsn0, which matches no network interface of this "
      "node",
      "MASTER_PORT 61001 on x2 is already in use (another job on this node?); expected a free "
      "port, e.g. dtrain's per-job port",
      "ranks disagree on MASTER_ADDR:MASTER_PORT (x1:61000, x1:61001); expected one rendezvous "
      "point for the whole job"};
  EXPECT_EQ(doctor_warnings({a, b, c}), expected);
}

TEST(Doctor, ReportsSurviveJson) {
  auto a = rank(0, "x1", "0-7", "0000:07:00.0", "0-15");
  a.env["TF_CONFIG"] = R"({"cluster":{}})";
  const auto back = report_from_json(report_to_json(a));
  EXPECT_EQ(report_to_json(back), report_to_json(a));
  EXPECT_EQ(format_doctor_table({a}),
            "rank  host              local  gpu                        cpus          nics\n"
            "0     x1                0/2    0000:07:00.0 A100          0-7           -\n");
}

}  // namespace
}  // namespace dtrain::report
