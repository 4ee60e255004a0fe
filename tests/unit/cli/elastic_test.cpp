// The elastic node range on Slurm: which nodes sinfo's answer says are lost, and the srun of the
// next attempt on the nodes left (its --nodes and --exclude), as the job script's launch reads.
#include "elastic.hpp"

#include <gtest/gtest.h>

#include "common/errors.hpp"

namespace dtrain::cli {
namespace {

const plan::SchedulerAdapter& slurm() { return *plan::scheduler_adapter("slurm"); }

TEST(Elastic, DownFailingAndSilentNodesAreLostDrainedOnesAreNot) {
  // sinfo -h -N -n c5n[1-3] -t down,fail,no_respond,drain -o '%N|%T|%E' (Slurm 22.05) on the
  // namespace cluster, c5n3's slurmd killed under a job: "c5n3|mixed*|none" 10 s later,
  // "c5n3|down*|Not responding" 20 s later; plus a drained node and a failing one.
  const auto lost = lost_nodes(slurm().parse_node_failures(
      "c5n2|drained|maintenance\nc5n3|down*|Not responding\nc5n3|down*|Not responding\n"
      "c5n4|mixed*|none\nc5n5|fail|bad dimm\n"));
  ASSERT_EQ(lost.size(), 3u);
  EXPECT_EQ(lost[0].name, "c5n3");
  EXPECT_EQ(lost[0].state, "DOWN");
  EXPECT_EQ(lost[1].name, "c5n4");
  EXPECT_EQ(lost[1].state, "NOT_RESPONDING");
  EXPECT_EQ(lost[2].state, "FAIL");
  EXPECT_EQ(describe_lost_nodes(lost),
            "node c5n3 lost (DOWN), node c5n4 lost (NOT_RESPONDING), node c5n5 lost (FAIL)");
  EXPECT_TRUE(lost_nodes(slurm().parse_node_failures("")).empty());
  EXPECT_EQ(describe_lost_nodes({}), "");
}

TEST(Elastic, TheNextSrunRunsOnTheNodesLeftWithTheSameRanksPerNode) {
  const std::vector<std::string> launch = {"srun",
                                           "--mpi=pmix",
                                           "--nodes=3",
                                           "--ntasks-per-node=2",
                                           "--kill-on-bad-exit=1",
                                           "--dtrain",
                                           "/opt/dtrain/bin/dtrain",
                                           "run-rank",
                                           "--",
                                           "./train",
                                           "--nodes=3"};
  EXPECT_EQ(shrink_launch(launch, 2, {"node3"}),
            (std::vector<std::string>{"srun", "--mpi=pmix", "--nodes=2", "--exclude=node3",
                                      "--overlap", "--ntasks-per-node=2", "--kill-on-bad-exit=1",
                                      "--dtrain", "/opt/dtrain/bin/dtrain", "run-rank", "--",
                                      "./train", "--nodes=3"}));
  // From an already shrunk launch: one --exclude, naming every lost node.
  EXPECT_EQ(shrink_launch(shrink_launch(launch, 2, {"node3"}), 1, {"node2", "node3"}),
            (std::vector<std::string>{"srun", "--mpi=pmix", "--nodes=1", "--exclude=node2,node3",
                                      "--overlap", "--ntasks-per-node=2", "--kill-on-bad-exit=1",
                                      "--dtrain", "/opt/dtrain/bin/dtrain", "run-rank", "--",
                                      "./train", "--nodes=3"}));
  EXPECT_EQ(shrink_launch({"/usr/bin/srun", "--nodes=3", "a.out"}, 3, {}),
            (std::vector<std::string>{"/usr/bin/srun", "--nodes=3", "a.out"}));
}

TEST(Elastic, OnlyAnSrunWithNodesCanShrink) {
  try {
    shrink_launch({"mpirun", "-np", "4", "./train"}, 2, {"node3"});
    FAIL() << "an mpirun launch was shrunk";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs an srun launch to run on fewer nodes, got "
                                         "\"mpirun\""),
              std::string::npos)
        << e.what();
  }
  // --nodes=3 of the program is not srun's.
  EXPECT_THROW(shrink_launch({"srun", "--ntasks=4", "./train", "--nodes=3"}, 2, {}), InputError);
}

}  // namespace
}  // namespace dtrain::cli
