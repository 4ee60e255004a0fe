#include "step_policy.hpp"

#include <gtest/gtest.h>

#include "errors.hpp"

namespace dtrain::spank {
namespace {

using affinity::GpuPolicy;
using affinity::GpuVisibility;

std::string message_of(std::string_view text, bool allow_default = true) {
  try {
    parse_step_policy(text, "--dtrain", StepPolicy{}, allow_default);
  } catch (const OptionError& e) {
    return e.what();
  }
  return "no error";
}

TEST(StepPolicy, PresetsSetTheAffinityFields) {
  const StepPolicy closest = parse_step_policy("closest", "--dtrain", StepPolicy{});
  EXPECT_TRUE(closest.enabled);
  EXPECT_EQ(closest.affinity.gpu, GpuPolicy::kClosest);
  EXPECT_FALSE(closest.best_effort);
  EXPECT_EQ(parse_step_policy("identity", "--dtrain", StepPolicy{}).affinity.gpu,
            GpuPolicy::kIdentity);
  EXPECT_EQ(parse_step_policy("own-first", "--dtrain", StepPolicy{}).affinity.gpu_visibility,
            GpuVisibility::kOwnFirst);
  EXPECT_FALSE(parse_step_policy("off", "--dtrain", StepPolicy{}).enabled);
}

TEST(StepPolicy, DefaultAndFailureModeKeepTheFallbackPreset) {
  StepPolicy site;
  site.affinity.gpu = GpuPolicy::kIdentity;
  site.enabled = false;  // naming any policy but "off" turns binding on
  const StepPolicy p = parse_step_policy("best-effort", "--dtrain", site);
  EXPECT_TRUE(p.enabled);
  EXPECT_TRUE(p.best_effort);
  EXPECT_EQ(p.affinity.gpu, GpuPolicy::kIdentity);
  const StepPolicy d = parse_step_policy("default,strict", "--dtrain", site);
  EXPECT_EQ(d.affinity.gpu, GpuPolicy::kIdentity);
  EXPECT_FALSE(d.best_effort);
  const StepPolicy c = parse_step_policy("closest,best-effort", "--dtrain", site);
  EXPECT_EQ(c.affinity.gpu, GpuPolicy::kClosest);
  EXPECT_TRUE(c.best_effort);
}

TEST(StepPolicy, BadPoliciesNameTheWordAndTheAcceptedOnes) {
  EXPECT_EQ(message_of("nearest"),
            "dtrain: --dtrain: unknown word \"nearest\"; expected a comma-separated list of "
            "default, closest, identity, own-first, off, strict or best-effort, got \"nearest\"");
  EXPECT_EQ(message_of("closest,identity"),
            "dtrain: --dtrain: \"closest\" and \"identity\" contradict each other; expected a "
            "comma-separated list of default, closest, identity, own-first, off, strict or "
            "best-effort, got \"closest,identity\"");
  EXPECT_NE(message_of("strict,best-effort").find("\"strict\" and \"best-effort\" contradict"),
            std::string::npos);
  EXPECT_NE(message_of("").find("empty policy"), std::string::npos);
  EXPECT_NE(message_of("closest,").find("an empty word"), std::string::npos);
  // In plugstack.conf "default" would refer to itself, so it is not offered there.
  EXPECT_EQ(message_of("default", false),
            "dtrain: --dtrain: unknown word \"default\"; expected a comma-separated list of "
            "closest, identity, own-first, off, strict or best-effort, got \"default\"");
}

TEST(StepPolicy, PrintsThePresetOrTheSettings) {
  EXPECT_EQ(to_string(parse_step_policy("identity,best-effort", "--dtrain", StepPolicy{})),
            "identity,best-effort");
  EXPECT_EQ(to_string(parse_step_policy("off", "--dtrain", StepPolicy{})), "off");
  StepPolicy custom;
  custom.affinity.cpu = affinity::CpuPolicy::kNone;
  EXPECT_EQ(to_string(custom), "gpu=closest gpu-visibility=own cpu=none nic=closest");
}

}  // namespace
}  // namespace dtrain::spank
