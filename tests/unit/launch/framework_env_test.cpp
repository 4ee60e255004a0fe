#include "launch/framework_env.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace dtrain::launch {
namespace {

JobPlacement two_nodes_of_four(int rank) {
  JobPlacement p;
  p.rank = rank;
  p.size = 8;
  p.local_rank = rank % 4;
  p.local_size = 4;
  p.node_rank = rank / 4;
  p.hosts = {"nid001", "nid002"};
  p.job_id = "4242";
  return p;
}

std::string message_of(auto&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Framework, ParsesEveryNameAndNamesTheFlagOnAMistake) {
  for (auto name : framework_names()) EXPECT_EQ(to_string(parse_framework(name)), name);
  EXPECT_EQ(message_of([] { parse_framework("pytorch", "--dtrain-framework"); }),
            "dtrain: --dtrain-framework: unknown framework \"pytorch\"; expected torch, "
            "tensorflow, jax, horovod or none, got \"pytorch\"");
  EXPECT_THROW(parse_framework("Torch"), FrameworkError);
}

TEST(Framework, TorchGetsTheTorchrunContract) {
  const Environment env = framework_environment(Framework::kTorch, two_nodes_of_four(6));
  const Environment expected = {{"GROUP_RANK", "1"},       {"LOCAL_RANK", "2"},
                                {"LOCAL_WORLD_SIZE", "4"}, {"MASTER_ADDR", "nid001"},
                                {"MASTER_PORT", "65242"},  // 61000 + 4242 % 4536
                                {"NODE_RANK", "1"},        {"RANK", "6"},
                                {"WORLD_SIZE", "8"}};
  EXPECT_EQ(env, expected);
}

TEST(Framework, PortsDependOnTheJobSoJobsSharingANodeDoNotCollide) {
  EXPECT_EQ(rendezvous_port(""), 29500);
  EXPECT_NE(rendezvous_port("100"), rendezvous_port("101"));
  EXPECT_EQ(rendezvous_port("4536"), 61000);
  // Non-numeric ids (local runs) hash, deterministically, into the same range.
  EXPECT_EQ(rendezvous_port("local-abc"), rendezvous_port("local-abc"));
  std::set<int> tf_ports;
  for (const char* job : {"100", "101", "102"}) {
    const int port = rendezvous_port(job);
    EXPECT_GE(port, 61000);
    EXPECT_LT(port, 65536);
    for (int local = 0; local < 128; ++local) {
      const int tf = tensorflow_worker_port(job, local);
      EXPECT_GE(tf, 20000);
      EXPECT_LT(tf, 32768);  // below Linux's default ephemeral range
      EXPECT_TRUE(tf_ports.insert(tf).second) << "job " << job << " local rank " << local;
    }
  }
  EXPECT_THROW(tensorflow_worker_port("1", 128), std::invalid_argument);
}

TEST(Framework, TensorflowListsEveryWorkerAndThisTask) {
  const Environment env = framework_environment(Framework::kTensorflow, two_nodes_of_four(5));
  ASSERT_EQ(env.size(), 1U);
  // 4242 % 96 = 18 → ports 20000 + 18 * 128 = 22304 onwards, one per local rank.
  EXPECT_EQ(env.at("TF_CONFIG"),
            R"({"cluster":{"worker":["nid001:22304","nid001:22305","nid001:22306","nid001:22307",)"
            R"("nid002:22304","nid002:22305","nid002:22306","nid002:22307"]},)"
            R"("task":{"type":"worker","index":5}})");
}

TEST(Framework, TensorflowRefusesALayoutItCannotDescribe) {
  JobPlacement cyclic = two_nodes_of_four(1);
  cyclic.node_rank = 1;  // rank 1 on the second node: a cyclic distribution
  EXPECT_EQ(message_of([&] { framework_environment(Framework::kTensorflow, cyclic); }),
            "dtrain: framework tensorflow: TF_CONFIG needs ranks laid out in blocks of equal size "
            "per node (rank = node * ranks_per_node + local rank); expected 2 node(s) x 4 = 8 "
            "ranks with rank 5 here, got rank 1 of 8");
}

TEST(Framework, JaxGetsTheCoordinatorAndProcessIds) {
  const Environment env = framework_environment(Framework::kJax, two_nodes_of_four(3));
  const Environment expected = {{"JAX_COORDINATOR_ADDRESS", "nid001:65242"},
                                {"JAX_LOCAL_PROCESS_ID", "3"},
                                {"JAX_NUM_PROCESSES", "8"},
                                {"JAX_PROCESS_ID", "3"}};
  EXPECT_EQ(env, expected);
}

// Issue 22, item 18: a spec's env (or the user's export) fixing the rendezvous port or address
// wins; the rank-position variables are still dtrain's.
TEST(Framework, RendezvousVariablesTheUserSetWin) {
  const Environment user = {{"MASTER_PORT", "29533"},
                            {"MASTER_ADDR", "gateway"},
                            {"JAX_COORDINATOR_ADDRESS", "gateway:1234"},
                            {"RANK", "7"}};
  const Environment torch = framework_environment(Framework::kTorch, two_nodes_of_four(6), user);
  EXPECT_EQ(torch.count("MASTER_PORT"), 0U);
  EXPECT_EQ(torch.count("MASTER_ADDR"), 0U);
  EXPECT_EQ(torch.at("RANK"), "6");
  EXPECT_EQ(torch.at("WORLD_SIZE"), "8");
  const Environment jax = framework_environment(Framework::kJax, two_nodes_of_four(3), user);
  EXPECT_EQ(jax.count("JAX_COORDINATOR_ADDRESS"), 0U);
  EXPECT_EQ(jax.at("JAX_PROCESS_ID"), "3");
  // Only the port set: dtrain still names the coordinator; an empty value counts as unset.
  const Environment port_only = framework_environment(
      Framework::kTorch, two_nodes_of_four(0), {{"MASTER_PORT", "29533"}, {"MASTER_ADDR", ""}});
  EXPECT_EQ(port_only.count("MASTER_PORT"), 0U);
  EXPECT_EQ(port_only.at("MASTER_ADDR"), "nid001");
}

TEST(Framework, HorovodAndNoneAddNothing) {
  EXPECT_TRUE(framework_environment(Framework::kHorovod, two_nodes_of_four(0)).empty());
  EXPECT_TRUE(framework_environment(Framework::kNone, JobPlacement{}).empty());
}

TEST(Framework, InconsistentPlacementIsACallerBug) {
  JobPlacement p = two_nodes_of_four(0);
  p.node_rank = 2;
  EXPECT_THROW(framework_environment(Framework::kTorch, p), std::invalid_argument);
}

LauncherInfo launcher(std::string name, int rank, int size, int local_rank, int local_size) {
  return {std::move(name), rank, size, local_rank, local_size, true};
}

TEST(Placement, SrunSaysWhichNodeAndTheStepNodeList) {
  const Environment env = {{"SLURM_STEP_NODELIST", "gpu[03-04]"},
                           {"SLURM_JOB_NODELIST", "gpu[01-04]"},
                           {"SLURM_NODEID", "1"},
                           {"SLURM_JOB_ID", "77"}};
  const JobPlacement p = placement_from_environment(env, launcher("slurm", 5, 8, 1, 4), "other");
  EXPECT_EQ(p.hosts, (std::vector<std::string>{"gpu03", "gpu04"}));
  EXPECT_EQ(p.node_rank, 1);
  EXPECT_EQ(p.job_id, "77");
}

TEST(Placement, ASlurmNodeIdWithASignOrSpaceIsRefused) {
  for (const char* bad : {"-0", " 1", "1\n", "+1"}) {
    const Environment env = {{"SLURM_STEP_NODELIST", "gpu[03-04]"}, {"SLURM_NODEID", bad}};
    try {
      placement_from_environment(env, launcher("slurm", 5, 8, 1, 4), "other");
      ADD_FAILURE() << "accepted SLURM_NODEID=\"" << bad << "\"";
    } catch (const LauncherEnvError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("dtrain: launcher environment: SLURM_NODEID: expected an integer >= "
                            "0, got \"") +
                    bad + "\"");
    }
  }
}

// An elastic job's attempt after a lost node (docs/fault-tolerance.md): srun --nodes=2
// --exclude=c5n1 in a 3-node allocation. The world and the torch rendezvous come from the step,
// so MASTER_ADDR is a node that is still up, never the allocation's first.
TEST(Placement, AShrunkStepRendezvousesOnItsOwnNodes) {
  const Environment env = {{"SLURM_STEP_NODELIST", "c5n[2-3]"},
                           {"SLURM_JOB_NODELIST", "c5n[1-3]"},
                           {"SLURM_NODEID", "1"},
                           {"SLURM_JOB_ID", "57"}};
  const JobPlacement p = placement_from_environment(env, launcher("slurm", 3, 4, 1, 2), "c5n3");
  EXPECT_EQ(p.hosts, (std::vector<std::string>{"c5n2", "c5n3"}));
  const Environment torch = framework_environment(Framework::kTorch, p);
  EXPECT_EQ(torch.at("MASTER_ADDR"), "c5n2");
  EXPECT_EQ(torch.at("WORLD_SIZE"), "4");
  EXPECT_EQ(torch.at("RANK"), "3");
}

TEST(Placement, NodeFileHostsAreDeduplicatedAndThisHostIsFound) {
  const Environment env = {{"DTRAIN_HOSTS", "x3001,x3001,x3002,x3002"},
                           {"PBS_JOBID", "1234.polaris-pbs-01"}};
  const JobPlacement p = placement_from_environment(env, launcher("pals", 2, 4, 0, 2), "x3002");
  EXPECT_EQ(p.hosts, (std::vector<std::string>{"x3001", "x3002"}));
  EXPECT_EQ(p.node_rank, 1);
  EXPECT_EQ(p.job_id, "1234");
}

TEST(Placement, WithoutAHostListThisHostIsTheJob) {
  const JobPlacement p = placement_from_environment({}, launcher("openmpi", 1, 2, 1, 2), "box");
  EXPECT_EQ(p.hosts, (std::vector<std::string>{"box"}));
  EXPECT_EQ(p.node_rank, 0);
  EXPECT_EQ(p.job_id, "");
}

TEST(Placement, ANodeBeyondTheListIsAnError) {
  const Environment env = {{"DTRAIN_HOSTS", "a"}};
  EXPECT_EQ(message_of([&] { placement_from_environment(env, launcher("pmi", 3, 4, 1, 2), "z"); }),
            "dtrain: launcher environment: DTRAIN_HOSTS: this process is on node 1 of the job "
            "(counting from 0); expected at least 2 hosts in the list, got 1");
}

}  // namespace
}  // namespace dtrain::launch
