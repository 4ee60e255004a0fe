#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <dtrain/dtrain.hpp>
#include <string>
#include <vector>

namespace {

// Unit tests run without a launcher; make sure nothing in the environment says otherwise.
class ContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"PMIX_NAMESPACE", "PMIX_RANK", "PMIX_SERVER_URI41", "PMIX_SERVER_URI4",
                          "DTRAIN_BOOTSTRAP", "DTRAIN_RUN_DIR"}) {
      unsetenv(v);
    }
  }
};

TEST_F(ContextTest, BareProcessIsASingleRank) {
  dtrain::Context ctx = dtrain::init();
  EXPECT_EQ(ctx.world().rank, 0);
  EXPECT_EQ(ctx.world().size, 1);
  EXPECT_EQ(ctx.world().local_rank, 0);
  EXPECT_EQ(ctx.world().local_size, 1);
  EXPECT_EQ(ctx.world().bootstrap, "single");
  EXPECT_EQ(ctx.comm().backend(), "single");
  EXPECT_EQ(ctx.run_dir(), "");
}

TEST_F(ContextTest, ForcedMethodsAreCheckedAndNamed) {
  setenv("DTRAIN_BOOTSTRAP", "bogus", 1);
  try {
    dtrain::init();
    FAIL() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: bootstrap: DTRAIN_BOOTSTRAP: expected one of: pmix, single, got "
                 "\"bogus\"");
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
  }
  setenv("DTRAIN_BOOTSTRAP", "pmix", 1);
  try {
    dtrain::init();
    FAIL() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_NE(std::string(e.what()).find("DTRAIN_BOOTSTRAP=pmix, but this process was not started "
                                         "by a PMIx launcher"),
              std::string::npos)
        << e.what();
  }
  setenv("DTRAIN_BOOTSTRAP", "single", 1);
  EXPECT_EQ(dtrain::init().world().bootstrap, "single");
}

TEST_F(ContextTest, SingleRankCollectivesAreExactCopies) {
  dtrain::Context ctx = dtrain::init();
  std::vector<float> f = {1.5f, -2.0f};
  std::vector<float> f_out(2);
  ctx.comm().allreduce(std::span<const float>(f), std::span<float>(f_out), dtrain::ReduceOp::kAvg);
  EXPECT_EQ(f_out, f);
  std::vector<double> d = {3.25};
  ctx.comm().allreduce(std::span<double>(d), dtrain::ReduceOp::kMax);
  EXPECT_EQ(d[0], 3.25);
  std::vector<std::int32_t> i32 = {7, -7};
  ctx.comm().allreduce(std::span<std::int32_t>(i32), dtrain::ReduceOp::kMin);
  EXPECT_EQ(i32, (std::vector<std::int32_t>{7, -7}));
  std::vector<std::int64_t> i64 = {1LL << 40};
  ctx.comm().allreduce(std::span<std::int64_t>(i64), dtrain::ReduceOp::kSum);
  EXPECT_EQ(i64[0], 1LL << 40);
  ctx.comm().broadcast(std::span<double>(d), 0);
  ctx.comm().barrier();
}

TEST_F(ContextTest, MisuseIsAnErrorNotUndefinedBehaviour) {
  dtrain::Context ctx = dtrain::init();
  std::vector<std::int32_t> ints = {1};
  EXPECT_THROW(ctx.comm().allreduce(std::span<std::int32_t>(ints), dtrain::ReduceOp::kAvg),
               dtrain::Error);
  std::vector<float> a(2), b(3);
  EXPECT_THROW(
      ctx.comm().allreduce(std::span<const float>(a), std::span<float>(b), dtrain::ReduceOp::kSum),
      dtrain::Error);
  EXPECT_THROW(ctx.comm().broadcast(std::span<float>(a), 1), dtrain::Error);
}

TEST_F(ContextTest, RunDirComesFromTheLauncher) {
  setenv("DTRAIN_RUN_DIR", "/tmp/some-run", 1);
  EXPECT_EQ(dtrain::init().run_dir(), "/tmp/some-run");
}

}  // namespace
