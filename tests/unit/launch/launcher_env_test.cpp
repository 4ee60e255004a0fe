#include "launch/launcher_env.hpp"

#include <gtest/gtest.h>

namespace dtrain::launch {
namespace {

TEST(DetectLauncher, BareProcessHasNone) {
  EXPECT_FALSE(detect_launcher({{"HOME", "/root"}}).has_value());
}

TEST(DetectLauncher, OpenMpi) {
  auto info = detect_launcher({{"OMPI_COMM_WORLD_RANK", "5"},
                               {"OMPI_COMM_WORLD_SIZE", "8"},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                               {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "openmpi");
  EXPECT_EQ(info->rank, 5);
  EXPECT_EQ(info->size, 8);
  EXPECT_EQ(info->local_rank, 1);
  EXPECT_EQ(info->local_size, 4);
}

TEST(DetectLauncher, MpirunInsideSlurmBatchStepIsOpenMpi) {
  // The batch step's SLURM_PROCID=0 is inherited by every rank mpirun starts.
  auto info = detect_launcher({{"SLURM_PROCID", "0"},
                               {"SLURM_NTASKS", "4"},
                               {"SLURM_LOCALID", "0"},
                               {"OMPI_COMM_WORLD_RANK", "3"},
                               {"OMPI_COMM_WORLD_SIZE", "4"},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                               {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "openmpi");
  EXPECT_EQ(info->rank, 3);
}

TEST(DetectLauncher, SlurmLocalSizeFromTasksPerNode) {
  auto info = detect_launcher({{"SLURM_PROCID", "7"},
                               {"SLURM_NTASKS", "8"},
                               {"SLURM_LOCALID", "2"},
                               {"SLURM_NODEID", "2"},
                               {"SLURM_STEP_TASKS_PER_NODE", "2(x2),3,1"}});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "slurm");
  EXPECT_EQ(info->local_size, 3);
}

TEST(DetectLauncher, PalsAndHydra) {
  auto pals = detect_launcher({{"PALS_RANKID", "6"},
                               {"PMI_SIZE", "8"},
                               {"PALS_LOCAL_RANKID", "2"},
                               {"PALS_LOCAL_SIZE", "4"}});
  ASSERT_TRUE(pals);
  EXPECT_EQ(pals->launcher, "pals");
  EXPECT_EQ(pals->local_rank, 2);
  auto pmi = detect_launcher({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}});
  ASSERT_TRUE(pmi);
  EXPECT_EQ(pmi->launcher, "pmi");
  EXPECT_EQ(pmi->local_size, 2);
  EXPECT_FALSE(pmi->local_known);
  // What MPICH 4.0's Hydra mpiexec sets (read off `mpiexec.hydra -n 4 env` on one host).
  auto hydra = detect_launcher(
      {{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}});
  ASSERT_TRUE(hydra);
  EXPECT_EQ(hydra->launcher, "pmi");
  EXPECT_EQ(hydra->rank, 3);
  EXPECT_EQ(hydra->local_rank, 1);
  EXPECT_EQ(hydra->local_size, 2);
  EXPECT_TRUE(hydra->local_known);
  // Cray PMI's pair wins where both are set: the two are never mixed.
  auto both = detect_launcher({{"PMI_RANK", "3"},
                               {"PMI_SIZE", "4"},
                               {"PMI_LOCAL_RANK", "0"},
                               {"PMI_LOCAL_SIZE", "1"},
                               {"MPI_LOCALRANKID", "1"},
                               {"MPI_LOCALNRANKS", "2"}});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->local_rank, 0);
  EXPECT_EQ(both->local_size, 1);
}

TEST(DetectLauncher, MalformedValuesAreErrorsNotZero) {
  try {
    detect_launcher({{"OMPI_COMM_WORLD_RANK", "1x"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
    FAIL() << "no error";
  } catch (const LauncherEnvError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: launcher environment: OMPI_COMM_WORLD_RANK: expected an integer >= 0, "
                 "got \"1x\"");
  }
  EXPECT_THROW(detect_launcher({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}}),
               LauncherEnvError);
  EXPECT_THROW(detect_launcher({{"SLURM_PROCID", "-1"}}), LauncherEnvError);
}

// from_chars took "-0" as rank 0; the shared parser (common/number_text.hpp) takes digits only.
TEST(DetectLauncher, ASignOrASpaceIsRefusedByName) {
  for (const char* bad : {"-0", "+0", " 0", "\t0", "0 ", "0x0"}) {
    try {
      detect_launcher({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"PMI_LOCAL_RANK", bad}});
      ADD_FAILURE() << "accepted PMI_LOCAL_RANK=\"" << bad << "\"";
    } catch (const LauncherEnvError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("dtrain: launcher environment: PMI_LOCAL_RANK: expected an integer "
                            ">= 0, got \"") +
                    bad + "\"");
    }
  }
}

TEST(DetectLauncher, LocalPlaceIsKnownOnlyWhenTheLauncherSaysSo) {
  auto ompi = detect_launcher({{"OMPI_COMM_WORLD_RANK", "5"},
                               {"OMPI_COMM_WORLD_SIZE", "8"},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                               {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_TRUE(ompi->local_known);
  // Hydra without PMI_LOCAL_*: 0 of the world size is a single-node guess.
  auto hydra = detect_launcher({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}});
  EXPECT_FALSE(hydra->local_known);
  auto slurm = detect_launcher({{"SLURM_PROCID", "3"},
                                {"SLURM_NTASKS", "4"},
                                {"SLURM_LOCALID", "3"},
                                {"SLURM_STEP_TASKS_PER_NODE", "4"}});
  EXPECT_TRUE(slurm->local_known);
  EXPECT_EQ(slurm->local_size, 4);
  auto bare_slurm = detect_launcher({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}});
  EXPECT_FALSE(bare_slurm->local_known);
}

TEST(DetectLauncher, PalsTakesTheLocalSizeFromCrayPmi) {
  // Polaris: PALS gives the local rank, Cray PMI the local size (ALCF's scripts read both).
  auto pals = detect_launcher({{"PALS_RANKID", "5"},
                               {"PMI_SIZE", "8"},
                               {"PALS_LOCAL_RANKID", "1"},
                               {"PMI_LOCAL_RANK", "1"},
                               {"PMI_LOCAL_SIZE", "4"}});
  ASSERT_TRUE(pals);
  EXPECT_EQ(pals->launcher, "pals");
  EXPECT_EQ(pals->local_size, 4);
  EXPECT_TRUE(pals->local_known);
}

TEST(DetectLauncher, SrunWithPmixIsSlurm) {
  // srun --mpi=pmix sets PMIX_RANK too; PMIx's local rank is a PMIx_Get key, not a variable, so
  // Slurm's own variables are the ones to read.
  auto srun = detect_launcher({{"PMIX_RANK", "1"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}});
  ASSERT_TRUE(srun);
  EXPECT_EQ(srun->launcher, "slurm");
  EXPECT_EQ(local_rank_variables(),
            (std::vector<std::string>{"OMPI_COMM_WORLD_LOCAL_RANK", "PALS_LOCAL_RANKID",
                                      "PMI_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}));
}

TEST(Hostlist, ExpandsSlurmRangesKeepingZeroPadding) {
  using V = std::vector<std::string>;
  EXPECT_EQ(expand_hostlist("nid[001-003,007],login1", "X"),
            (V{"nid001", "nid002", "nid003", "nid007", "login1"}));
  EXPECT_EQ(expand_hostlist("gpu[8-10]-ib", "X"), (V{"gpu8-ib", "gpu9-ib", "gpu10-ib"}));
  EXPECT_EQ(expand_hostlist("n[08-10]", "X"), (V{"n08", "n09", "n10"}));
  EXPECT_EQ(expand_hostlist("localhost", "X"), (V{"localhost"}));
}

TEST(Hostlist, MalformedListsNameTheVariable) {
  try {
    expand_hostlist("nid[1-", "SLURM_JOB_NODELIST");
    ADD_FAILURE() << "no error";
  } catch (const LauncherEnvError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: launcher environment: SLURM_JOB_NODELIST: unbalanced brackets; expected "
                 "a host list such as \"nid[001-004,007],login1\", got \"nid[1-\"");
  }
  for (const char* bad : {"a[]", "a[3-1]", "a,,b", "a,", "", "a[1]b[2]", "a[x]", "a]"}) {
    EXPECT_THROW(expand_hostlist(bad, "X"), LauncherEnvError) << bad;
  }
  EXPECT_THROW(expand_hostlist("n[0-99999999]", "X"), LauncherEnvError);
}

}  // namespace
}  // namespace dtrain::launch
