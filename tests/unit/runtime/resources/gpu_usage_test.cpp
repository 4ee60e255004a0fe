// Which GPU is the rank's (runtime/resources/gpu_usage.hpp): CUDA_VISIBLE_DEVICES' first device,
// or none.
#include "resources/gpu_usage.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace dtrain::runtime {
namespace {

TEST(GpuChoice, TheRanksGpuIsTheFirstVisibleDevice) {
  EXPECT_EQ(choose_rank_gpu("3", 0).index, 3);
  EXPECT_EQ(choose_rank_gpu("2,0,1", 1).index, 2) << "own-first: the rank's GPU leads";
  const GpuChoice uuid = choose_rank_gpu("GPU-5f3c1e2a-0000-1111-2222-333344445555,1", 0);
  EXPECT_FALSE(uuid.index);
  EXPECT_EQ(uuid.uuid, "GPU-5f3c1e2a-0000-1111-2222-333344445555");
  EXPECT_EQ(choose_rank_gpu("MIG-abc", 0).uuid, "MIG-abc");
  // Without the variable: the local rank's GPU, as torch.cuda.set_device(local_rank) picks.
  EXPECT_EQ(choose_rank_gpu(std::nullopt, 3).index, 3);
}

TEST(GpuChoice, AVariableNamingNoDeviceMeansNoGpu) {
  for (const char* none : {"", "-1", "NoDevFiles", " 1", "+1", "0x1"}) {
    EXPECT_TRUE(choose_rank_gpu(none, 0).none()) << "CUDA_VISIBLE_DEVICES=\"" << none << "\"";
  }
}

}  // namespace
}  // namespace dtrain::runtime
