// init() without a launcher: the single-process fallback, DTRAIN_BOOTSTRAP, Context ownership.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <dtrain/dtrain.hpp>
#include <string>
#include <utility>

namespace {

// ctest removes the launcher variables (see CMakeLists.txt); this makes a direct run of the
// binary inside a job behave the same.
class ContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"PMIX_NAMESPACE", "PMIX_RANK", "DTRAIN_BOOTSTRAP", "DTRAIN_RUN_DIR"}) {
      unsetenv(v);
    }
  }
  void TearDown() override { unsetenv("DTRAIN_BOOTSTRAP"); }
};

std::string init_error() {
  try {
    dtrain::init();
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    return e.what();
  }
  ADD_FAILURE() << "init() did not throw";
  return "";
}

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

TEST_F(ContextTest, BareProcessIsASingleRank) {
  dtrain::Context ctx = dtrain::init();
  const dtrain::WorldInfo& w = ctx.world();
  EXPECT_EQ(w.rank, 0);
  EXPECT_EQ(w.size, 1);
  EXPECT_EQ(w.local_rank, 0);
  EXPECT_EQ(w.local_size, 1);
  EXPECT_EQ(w.node_id, 0);
  EXPECT_EQ(w.hostname, this_host());
  EXPECT_EQ(w.bootstrap, "single");
  EXPECT_EQ(ctx.comm().backend(), "single");
}

TEST_F(ContextTest, ForcedSingleIsSingle) {
  setenv("DTRAIN_BOOTSTRAP", "single", 1);
  EXPECT_EQ(dtrain::init().world().bootstrap, "single");
}

TEST_F(ContextTest, EmptyBootstrapVariableMeansAutomatic) {
  setenv("DTRAIN_BOOTSTRAP", "", 1);
  EXPECT_EQ(dtrain::init().world().bootstrap, "single");
}

TEST_F(ContextTest, UnknownBootstrapNamesTheVariableAndTheChoices) {
  setenv("DTRAIN_BOOTSTRAP", "bogus", 1);
  EXPECT_EQ(init_error(),
            "dtrain: bootstrap: DTRAIN_BOOTSTRAP: unknown method; expected pmix, mpi, tcp, env or "
            "single, got "
            "\"bogus\"");
}

TEST_F(ContextTest, ForcedPmixWithoutALauncherNamesTheMethodAndTheCause) {
  setenv("DTRAIN_BOOTSTRAP", "pmix", 1);
  EXPECT_EQ(init_error(),
            "dtrain: bootstrap: DTRAIN_BOOTSTRAP=pmix: no PMIx launcher started this process; "
            "expected PMIX_NAMESPACE and PMIX_RANK (set by mpirun or srun --mpi=pmix), got "
            "neither");
}

TEST_F(ContextTest, MovesKeepTheStateAndTheCommHandle) {
  dtrain::Context a = dtrain::init();
  dtrain::Comm* comm = &a.comm();
  dtrain::Context b = std::move(a);
  EXPECT_EQ(&b.comm(), comm);  // the handle lives with the state, not in the Context object
  EXPECT_EQ(b.world().size, 1);
  dtrain::Context c = dtrain::init();
  c = std::move(b);
  EXPECT_EQ(&c.comm(), comm);
}

TEST_F(ContextTest, MovedFromContextIsAnErrorNotACrash) {
  dtrain::Context a = dtrain::init();
  dtrain::Context b = std::move(a);
  try {
    (void)a.world();  // NOLINT(bugprone-use-after-move): the point of the test
    FAIL() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: context: used after it was moved from; expected the Context init() "
              "returned, or the one it was moved to");
  }
  EXPECT_THROW(a.comm(), dtrain::Error);
}

TEST_F(ContextTest, ErrorIsARuntimeError) {
  const dtrain::Error e(dtrain::Error::Code::kSystem, "dtrain: x: y");
  const std::runtime_error& base = e;
  EXPECT_STREQ(base.what(), "dtrain: x: y");
  EXPECT_EQ(e.code(), dtrain::Error::Code::kSystem);
}

TEST_F(ContextTest, StoreHoldsValuesAndNamesAMissingKey) {
  setenv("DTRAIN_TIMEOUT", "0.2", 1);
  dtrain::Context ctx = dtrain::init();
  ctx.store_set("run", "abc");
  EXPECT_EQ(ctx.store_get("run"), "abc");
  try {
    ctx.store_get("never-set");
    ADD_FAILURE() << "no error for a key nobody set";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kTimeout);
    EXPECT_EQ(std::string(e.what()),
              "dtrain: store: memory: wait: keys \"never-set\" not set within 0.2 s "
              "(DTRAIN_TIMEOUT); expected every rank to publish them (a rank that never started "
              "or died?)");
  }
  unsetenv("DTRAIN_TIMEOUT");
}

TEST_F(ContextTest, BadTimeoutNamesTheVariable) {
  setenv("DTRAIN_TIMEOUT", "soon", 1);
  EXPECT_EQ(init_error(),
            "dtrain: DTRAIN_TIMEOUT: expected a positive number of seconds (at least 0.001, at "
            "most 1e7), got \"soon\"");
  unsetenv("DTRAIN_TIMEOUT");
}

TEST_F(ContextTest, TcpBootstrapRejectsARankOutsideTheWorld) {
  setenv("DTRAIN_BOOTSTRAP", "tcp", 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", "29500", 1);
  setenv("WORLD_SIZE", "4", 1);
  setenv("RANK", "4", 1);
  EXPECT_EQ(init_error(),
            "dtrain: bootstrap: tried tcp (DTRAIN_BOOTSTRAP=tcp): RANK: expected an integer from 0 "
            "to 3, got \"4\"");
  unsetenv("RANK");
  EXPECT_EQ(init_error(),
            "dtrain: bootstrap: tried tcp (DTRAIN_BOOTSTRAP=tcp): RANK is not set; expected "
            "MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (as torchrun sets them)");
  for (const char* v : {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE"}) unsetenv(v);
}

// A partial torchrun environment became "rank 0 of 1" without a word.
TEST_F(ContextTest, PartialTorchrunVariablesNameWhatIsMissing) {
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "3", 1);
  EXPECT_EQ(init_error(),
            "dtrain: bootstrap: MASTER_ADDR, RANK and WORLD_SIZE are set but not MASTER_PORT; "
            "expected all of MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (as torchrun sets "
            "them), or none of them for one process");
  unsetenv("WORLD_SIZE");
  setenv("MASTER_PORT", "29500", 1);
  setenv("WORLDSIZE", "3", 1);
  EXPECT_EQ(init_error(),
            "dtrain: bootstrap: MASTER_ADDR, MASTER_PORT and RANK are set but not WORLD_SIZE; "
            "expected all of MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (as torchrun sets "
            "them), or none of them for one process; WORLDSIZE is set: did you mean WORLD_SIZE?");
  for (const char* v : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLDSIZE"}) unsetenv(v);
  setenv("LOCAL_RANK", "0", 1);
  EXPECT_EQ(init_error(),
            "dtrain: bootstrap: LOCAL_RANK is set but not MASTER_ADDR, MASTER_PORT, RANK and "
            "WORLD_SIZE; expected all of MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (as "
            "torchrun sets them), or none of them for one process");
  unsetenv("LOCAL_RANK");
}

// LOCAL_RANK=1 alone failed with "expected an integer from 0 to 0".
TEST_F(ContextTest, LocalRankComesWithLocalWorldSize) {
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", "29500", 1);
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  setenv("LOCAL_RANK", "1", 1);
  EXPECT_EQ(init_error(),
            "dtrain: bootstrap: tried tcp (MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE set): "
            "LOCAL_RANK is set but not LOCAL_WORLD_SIZE; expected both (as torchrun sets them) or "
            "neither (one rank per node)");
  for (const char* v : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"}) {
    unsetenv(v);
  }
}

}  // namespace
