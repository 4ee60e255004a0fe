#include "settings.hpp"

#include <gtest/gtest.h>

#include "errors.hpp"

namespace dtrain::spank {
namespace {

using affinity::GpuPolicy;
using launch::Environment;
using launch::Framework;

RequestedOptions command_line(std::initializer_list<std::pair<OptionId, const char*>> given) {
  RequestedOptions o;
  for (const auto& [id, value] : given) record_option(o, id, value);
  return o;
}

std::string message_of(const RequestedOptions& o, const Environment& env,
                       const PluginConfig& config = {}) {
  try {
    resolve_settings(o, env, config);
  } catch (const OptionError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Settings, OffUnlessAskedFor) {
  const StepSettings s = resolve_settings({}, {}, {});
  EXPECT_FALSE(s.policy.enabled);
  EXPECT_EQ(s.framework, Framework::kNone);
  EXPECT_FALSE(s.verbose);
  // A DTRAIN_GPU in the environment fills in a value; it does not switch binding on.
  EXPECT_FALSE(resolve_settings({}, {{"DTRAIN_GPU", "identity"}}, {}).policy.enabled);
}

TEST(Settings, BareDtrainTakesTheSiteDefault) {
  PluginConfig site;
  site.default_policy.affinity.gpu = GpuPolicy::kIdentity;
  const StepSettings s = resolve_settings(command_line({{OptionId::kDtrain, nullptr}}), {}, site);
  EXPECT_TRUE(s.policy.enabled);
  EXPECT_EQ(s.policy.affinity.gpu, GpuPolicy::kIdentity);
  EXPECT_EQ(resolve_settings(command_line({{OptionId::kDtrain, "closest"}}), {}, site)
                .policy.affinity.gpu,
            GpuPolicy::kClosest);
}

TEST(Settings, AnyOptionImpliesDtrain) {
  const StepSettings s = resolve_settings(command_line({{OptionId::kFramework, "torch"}}), {}, {});
  EXPECT_TRUE(s.policy.enabled);
  EXPECT_EQ(s.framework, Framework::kTorch);
  // ... unless the user said off.
  EXPECT_FALSE(
      resolve_settings(command_line({{OptionId::kDtrain, "off"}, {OptionId::kFramework, "torch"}}),
                       {}, {})
          .policy.enabled);
}

TEST(Settings, EnabledByDefaultAndOptingOut) {
  PluginConfig site;
  site.enabled_by_default = true;
  EXPECT_TRUE(resolve_settings({}, {}, site).policy.enabled);
  EXPECT_FALSE(
      resolve_settings(command_line({{OptionId::kDtrain, "off"}}), {}, site).policy.enabled);
  EXPECT_FALSE(resolve_settings({}, {{"DTRAIN_BIND", "0"}}, site).policy.enabled);
}

TEST(Settings, EnvironmentFillsInWhatTheCommandLineLeftOpen) {
  const Environment env{{"DTRAIN_BIND", "1"},
                        {"DTRAIN_GPU", "identity"},
                        {"DTRAIN_GPU_VISIBILITY", "own-first"},
                        {"DTRAIN_CPU", "none"},
                        {"DTRAIN_NIC", "all"},
                        {"DTRAIN_FRAMEWORK", "jax"},
                        {"DTRAIN_LOG_DIR", "/runs/a"},
                        {"DTRAIN_VERBOSE", "1"}};
  const StepSettings s = resolve_settings({}, env, {});
  EXPECT_TRUE(s.policy.enabled);
  EXPECT_EQ(s.policy.affinity.gpu, GpuPolicy::kIdentity);
  EXPECT_EQ(s.policy.affinity.gpu_visibility, affinity::GpuVisibility::kOwnFirst);
  EXPECT_EQ(s.policy.affinity.cpu, affinity::CpuPolicy::kNone);
  EXPECT_EQ(s.policy.affinity.nic, affinity::NicPolicy::kAll);
  EXPECT_EQ(s.framework, Framework::kJax);
  EXPECT_EQ(s.run_dir, "/runs/a");
  EXPECT_TRUE(s.verbose);
  // DTRAIN_BIND may also name a policy.
  EXPECT_TRUE(
      resolve_settings({}, {{"DTRAIN_BIND", "identity,best-effort"}}, {}).policy.best_effort);
}

TEST(Settings, CommandLineWinsOverEnvironment) {
  const Environment env{
      {"DTRAIN_GPU", "identity"}, {"DTRAIN_FRAMEWORK", "jax"}, {"DTRAIN_BIND", "0"}};
  const StepSettings s = resolve_settings(
      command_line({{OptionId::kGpu, "none"}, {OptionId::kFramework, "torch"}}), env, {});
  EXPECT_TRUE(s.policy.enabled);
  EXPECT_EQ(s.policy.affinity.gpu, GpuPolicy::kNone);
  EXPECT_EQ(s.framework, Framework::kTorch);
}

TEST(Settings, RunDirVariableIsNotTheExportedOne) {
  // Job scripts export DTRAIN_RUN_DIR for `dtrain run-rank`, which writes the rank logs itself:
  // it must not also make the plugin tee them.
  EXPECT_EQ(resolve_settings(command_line({{OptionId::kDtrain, nullptr}}),
                             {{"DTRAIN_RUN_DIR", "/runs/x"}}, {})
                .run_dir,
            "");
}

TEST(Settings, SwitchVariablesTakePlugstacksWords) {
  // One word list for plugstack.conf's verbose= and the DTRAIN_* switches: DTRAIN_VERBOSE=off
  // used to be refused while verbose=off was accepted.
  for (const char* on : {"1", "yes", "y", "true", "on"}) {
    EXPECT_TRUE(resolve_settings({}, {{"DTRAIN_VERBOSE", on}}, {}).verbose) << on;
    EXPECT_TRUE(resolve_settings({}, {{"DTRAIN_BIND", on}}, {}).policy.enabled) << on;
    EXPECT_TRUE(parse_config({std::string("verbose=") + on}).verbose) << on;
  }
  PluginConfig site;
  site.enabled_by_default = true;
  for (const char* off : {"0", "no", "n", "false", "off"}) {
    EXPECT_FALSE(resolve_settings({}, {{"DTRAIN_VERBOSE", off}}, {}).verbose) << off;
    EXPECT_FALSE(resolve_settings({}, {{"DTRAIN_BIND", off}}, site).policy.enabled) << off;
    EXPECT_FALSE(parse_config({std::string("verbose=") + off}).verbose) << off;
  }
}

TEST(Settings, BadVariablesAreNamed) {
  EXPECT_EQ(message_of({}, {{"DTRAIN_GPU", "fast"}}),
            "dtrain: affinity: DTRAIN_GPU: unknown policy \"fast\"; expected closest, identity or "
            "none, got \"fast\"");
  EXPECT_EQ(message_of({}, {{"DTRAIN_FRAMEWORK", "pytorch"}}),
            "dtrain: DTRAIN_FRAMEWORK: unknown framework \"pytorch\"; expected torch, "
            "tensorflow, jax, horovod or none, got \"pytorch\"");
  EXPECT_EQ(message_of({}, {{"DTRAIN_VERBOSE", "loud"}}),
            "dtrain: DTRAIN_VERBOSE: expected 1 or 0, got \"loud\"");
  EXPECT_NE(message_of({}, {{"DTRAIN_BIND", "always"}})
                .find("dtrain: DTRAIN_BIND (1, 0 or a POLICY): unknown word \"always\""),
            std::string::npos);
  // The command line's value is used, so a bad variable it overrides is not an error.
  EXPECT_EQ(message_of(command_line({{OptionId::kGpu, "none"}}), {{"DTRAIN_GPU", "fast"}}),
            "no error");
}

}  // namespace
}  // namespace dtrain::spank
