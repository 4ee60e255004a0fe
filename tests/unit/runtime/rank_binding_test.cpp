// The binding record's facts from values (runtime/rank_binding.hpp): the cpuset in list form,
// CUDA_VISIBLE_DEVICES as set, and the NIC variables that are set, DTRAIN_NICS first.
#include "rank_binding.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace dtrain::runtime {
namespace {

using Nics = std::vector<std::pair<std::string, std::string>>;

TEST(RankBinding, TakesTheCpusetTheGpusAndTheNicVariablesThatAreSet) {
  const launch::Environment env = {{"CUDA_VISIBLE_DEVICES", "GPU-3f1e,1"},
                                   {"UCX_NET_DEVICES", "mlx5_0:1"},
                                   {"NCCL_IB_HCA", "=mlx5_0"},
                                   {"NCCL_SOCKET_IFNAME", ""},
                                   {"DTRAIN_NICS", "mlx5_0"},
                                   {"OMP_NUM_THREADS", "4"}};
  const auto b = describe_binding(env, affinity::CpuSet{0, 1, 2, 3, 8, 10, 11}, "node01");
  EXPECT_EQ(b.host, "node01");
  EXPECT_EQ(b.cpus, "0-3,8,10-11");
  EXPECT_EQ(b.gpus, "GPU-3f1e,1");
  EXPECT_EQ(b.nics, (Nics{{"DTRAIN_NICS", "mlx5_0"},
                          {"NCCL_IB_HCA", "=mlx5_0"},
                          {"UCX_NET_DEVICES", "mlx5_0:1"}}));
}

TEST(RankBinding, WithoutVariablesOnlyTheCpus) {
  const auto b = describe_binding({}, affinity::CpuSet{5}, "n");
  EXPECT_EQ(b.cpus, "5");
  EXPECT_FALSE(b.gpus);
  EXPECT_TRUE(b.nics.empty());
  // Set and empty is a rank that sees no GPU: kept, unlike an unset variable.
  EXPECT_EQ(describe_binding({{"CUDA_VISIBLE_DEVICES", ""}}, affinity::CpuSet{5}, "n").gpus, "");
}

}  // namespace
}  // namespace dtrain::runtime
