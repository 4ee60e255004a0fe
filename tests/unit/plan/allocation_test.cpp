#include "plan/allocation.hpp"

#include <gtest/gtest.h>

#include "common/errors.hpp"

namespace dtrain::plan {
namespace {

TEST(HeldAllocation, NoneOutsideAnAllocation) {
  EXPECT_FALSE(held_allocation({{"HOME", "/root"}, {"SLURM_JOB_ID", ""}}));
}

TEST(HeldAllocation, SlurmsJobAndItsNodes) {
  auto a = held_allocation({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NUM_NODES", "2"}});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->id, "42");
  EXPECT_EQ(a->variable, "SLURM_JOB_ID");
  EXPECT_EQ(a->default_site, "slurm");
  EXPECT_EQ(a->nodes, 2);
  a = held_allocation({{"SLURM_JOB_ID", "42"}, {"SLURM_NNODES", "3"}});
  EXPECT_EQ(a->nodes, 3);
  a = held_allocation({{"SLURM_JOB_ID", "42"}});
  EXPECT_FALSE(a->nodes);
}

TEST(HeldAllocation, PbsNodesComeFromItsNodeFile) {
  const auto a = held_allocation({{"PBS_JOBID", "7.polaris-pbs-01"}, {"PBS_NODEFILE", "/var/n"}});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->id, "7.polaris-pbs-01");
  EXPECT_EQ(a->node_file, "/var/n");
  EXPECT_EQ(a->schedulers, (std::vector<std::string>{"pbspro", "pbs"}));
  EXPECT_EQ(a->default_site, "pbs");  // Torque's generic site; Polaris is --site polaris
  EXPECT_EQ(distinct_hosts("x1\nx1\nx2\n\nx3 \nx2"), 3);
  EXPECT_EQ(distinct_hosts(""), 0);
}

TEST(HeldAllocation, TheVariablesAreTheAdapters) {
  EXPECT_EQ(allocation_variables(), "SLURM_JOB_ID, PBS_JOBID or COBALT_JOBID");
}

TEST(HeldAllocation, CobaltsPartition) {
  const auto a = held_allocation({{"COBALT_JOBID", "9"}, {"COBALT_PARTSIZE", "4"}});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->default_site, "thetagpu");
  EXPECT_EQ(a->nodes, 4);
}

TEST(HeldAllocation, ANodeCountThatIsNoNumberIsNamed) {
  try {
    held_allocation({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NUM_NODES", "two"}});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: SLURM_JOB_NUM_NODES=two: expected the allocation's node count, a whole "
                 "number from 1");
  }
}

TEST(HeldAllocation, ASiteOfAnotherSchedulerIsRefusedNamingBoth) {
  const auto a = held_allocation({{"SLURM_JOB_ID", "12"}});
  EXPECT_EQ(site_mismatch(*a, "slurm", "slurm"), "");
  EXPECT_EQ(site_mismatch(*a, "polaris", "pbspro"),
            "site polaris runs on pbspro, and this shell holds slurm job 12 (SLURM_JOB_ID); "
            "expected a site on slurm (--site)");
  const auto p = held_allocation({{"PBS_JOBID", "5"}});
  EXPECT_EQ(site_mismatch(*p, "polaris", "pbspro"), "");
  EXPECT_EQ(site_mismatch(*p, "local", "local"),
            "site local runs on local, and this shell holds pbspro job 5 (PBS_JOBID); expected a "
            "site on pbspro or pbs (--site)");
}

}  // namespace
}  // namespace dtrain::plan
