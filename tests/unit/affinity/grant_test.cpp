#include "affinity/grant.hpp"

#include <gtest/gtest.h>

#include "affinity/errors.hpp"

namespace dtrain::affinity {
namespace {

TEST(Grant, NothingSetMeansNoRestriction) {
  const auto g = gpu_grant_from_environment({{"HOME", "/root"}});
  EXPECT_FALSE(g.gpus);
  EXPECT_FALSE(g.inherited_visible_devices);
  EXPECT_EQ(g.variable, "");
}

TEST(Grant, SlurmStepGpusWinsOverARenumberedCudaList) {
  // Under ConstrainDevices Slurm renumbers CUDA_VISIBLE_DEVICES inside the cgroup; the node
  // indices are in SLURM_STEP_GPUS.
  const auto g =
      gpu_grant_from_environment({{"SLURM_STEP_GPUS", "2,3"}, {"CUDA_VISIBLE_DEVICES", "0,1"}});
  EXPECT_EQ(g.gpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(g.variable, "SLURM_STEP_GPUS");
  EXPECT_EQ(g.inherited_visible_devices, (std::vector<std::string>{"0", "1"}));
}

TEST(Grant, CudaAndRocmListsKeepTheirOrder) {
  EXPECT_EQ(gpu_grant_from_environment({{"CUDA_VISIBLE_DEVICES", "3,1"}}).gpus,
            (std::vector<int>{3, 1}));
  EXPECT_EQ(gpu_grant_from_environment({{"ROCR_VISIBLE_DEVICES", "4-5"}}).gpus,
            (std::vector<int>{4, 5}));
  // An empty list grants no GPU at all.
  EXPECT_EQ(gpu_grant_from_environment({{"CUDA_VISIBLE_DEVICES", ""}}).gpus, std::vector<int>{});
}

TEST(Grant, UuidsCannotBePlacedWithoutNvml) {
  try {
    gpu_grant_from_environment({{"CUDA_VISIBLE_DEVICES", "GPU-04732404"}});
    FAIL() << "no error";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: affinity: CUDA_VISIBLE_DEVICES: cannot tell which GPUs it grants; "
                 "expected indices such as 0,1 (or pass --gpus-allowed), got \"GPU-04732404\"");
  }
}

TEST(Grant, IndexLists) {
  EXPECT_EQ(parse_index_list("0,2-3", "x"), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(parse_index_list("3,0", "x"), (std::vector<int>{3, 0}));
  EXPECT_THROW(parse_index_list("1,,2", "--gpus-allowed"), PolicyError);
  EXPECT_THROW(parse_index_list("a", "--gpus-allowed"), PolicyError);
}

}  // namespace
}  // namespace dtrain::affinity
