#include "affinity_flags.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "affinity/errors.hpp"

namespace dtrain::cli {
namespace {

AffinityFlags parsed(std::vector<std::string> args) {
  CLI::App app;
  AffinityFlags flags;
  add_affinity_flags(app, flags);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  app.parse(args);
  return flags;
}

TEST(AffinityFlags, DefaultsAreThePolicyDefaults) {
  const AffinityFlags flags = parsed({});
  const affinity::Policy p = flags.policy();
  const affinity::Policy defaults;
  EXPECT_EQ(p.gpu, defaults.gpu);
  EXPECT_EQ(p.gpu_visibility, defaults.gpu_visibility);
  EXPECT_EQ(p.cpu, defaults.cpu);
  EXPECT_EQ(p.nic, defaults.nic);
  EXPECT_FALSE(flags.restriction().gpus);
  EXPECT_FALSE(flags.restriction().cpus);
}

TEST(AffinityFlags, AllSixAreRegisteredAndParsed) {
  const AffinityFlags flags =
      parsed({"--gpu", "identity", "--gpu-visibility", "own-first", "--cpu", "none", "--nic", "all",
              "--gpus-allowed", "0,2-3", "--cpus-allowed", "0-3,8"});
  const affinity::Policy p = flags.policy();
  EXPECT_EQ(p.gpu, affinity::GpuPolicy::kIdentity);
  EXPECT_EQ(p.gpu_visibility, affinity::GpuVisibility::kOwnFirst);
  EXPECT_EQ(p.cpu, affinity::CpuPolicy::kNone);
  EXPECT_EQ(p.nic, affinity::NicPolicy::kAll);
  EXPECT_EQ(flags.restriction().gpus, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(flags.restriction().cpus->to_list(), "0-3,8");
}

TEST(AffinityFlags, BadValuesNameTheFlag) {
  AffinityFlags flags;
  flags.gpu = "nearest";
  try {
    (void)flags.policy();
    FAIL() << "no error";
  } catch (const affinity::PolicyError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: affinity: --gpu: unknown policy \"nearest\"; expected closest, identity or "
              "none, got \"nearest\"");
  }
  flags = AffinityFlags{};
  flags.gpus_allowed = "two";
  try {
    (void)flags.restriction();
    FAIL() << "no error";
  } catch (const affinity::PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpus-allowed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dtrain::cli
