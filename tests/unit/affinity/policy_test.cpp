#include "affinity/policy.hpp"

#include <gtest/gtest.h>

#include "affinity/errors.hpp"

namespace dtrain::affinity {
namespace {

TEST(Policy, EveryNameParsesAndPrintsBack) {
  for (auto name : gpu_policy_names()) EXPECT_EQ(to_string(parse_gpu_policy(name)), name);
  for (auto name : gpu_visibility_names()) EXPECT_EQ(to_string(parse_gpu_visibility(name)), name);
  for (auto name : cpu_policy_names()) EXPECT_EQ(to_string(parse_cpu_policy(name)), name);
  for (auto name : nic_policy_names()) EXPECT_EQ(to_string(parse_nic_policy(name)), name);
  EXPECT_EQ(parse_gpu_visibility("own-first"), GpuVisibility::kOwnFirst);
}

TEST(Policy, DefaultsAreTheTopologyAwareOnes) {
  const Policy p;
  EXPECT_EQ(p.gpu, GpuPolicy::kClosest);
  EXPECT_EQ(p.gpu_visibility, GpuVisibility::kOwn);
  EXPECT_EQ(p.cpu, CpuPolicy::kNuma);
  EXPECT_EQ(p.nic, NicPolicy::kClosest);
}

TEST(Policy, UnknownNamesListTheAcceptedOnes) {
  try {
    parse_gpu_policy("nearest", "--gpu");
    FAIL() << "no error";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: affinity: --gpu: unknown policy \"nearest\"; expected closest, identity "
                 "or none, got \"nearest\"");
  }
  try {
    parse_cpu_policy("socket", "affinity.cpu");
    FAIL() << "no error";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: affinity: affinity.cpu: unknown policy \"socket\"; expected numa or "
                 "none, got \"socket\"");
  }
  EXPECT_THROW(parse_nic_policy("Closest"), PolicyError);  // case matters, as in the spec
  EXPECT_THROW(parse_gpu_visibility(""), PolicyError);
  // Bad input, like a TopologyError, without being one: the CLI maps both to exit 2 through
  // the error root.
  EXPECT_THROW(parse_nic_policy("any"), InputError);
}

}  // namespace
}  // namespace dtrain::affinity
