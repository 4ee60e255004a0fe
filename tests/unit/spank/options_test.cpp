#include "options.hpp"

#include <gtest/gtest.h>

#include <set>

#include "errors.hpp"

namespace dtrain::spank {
namespace {

std::string message_of(OptionId id, const char* value) {
  RequestedOptions o;
  try {
    record_option(o, id, value);
  } catch (const OptionError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Options, TableKeepsTheNamesJobScriptsUse) {
  // cli/plan/planner.cpp bind_policy_flags() writes these after --dtrain in generated scripts.
  std::set<std::string_view> names;
  for (const auto& s : option_specs()) {
    names.insert(s.name);
    EXPECT_EQ(s.usage.substr(0, 9), "[dtrain] ") << s.name;
    EXPECT_EQ(s.environment.substr(0, 7), "DTRAIN_") << s.name;
    EXPECT_EQ(&option_spec(s.id), &s);
  }
  for (std::string_view n :
       {"dtrain", "dtrain-gpu", "dtrain-gpu-visibility", "dtrain-cpu", "dtrain-nic",
        "dtrain-framework", "dtrain-run-dir", "dtrain-verbose"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  EXPECT_EQ(option_spec(OptionId::kDtrain).arg, ArgKind::kOptional);
  EXPECT_EQ(option_spec(OptionId::kVerbose).arg, ArgKind::kNone);
  EXPECT_EQ(option_spec(OptionId::kGpu).arginfo, "closest|identity|none");
}

TEST(Options, RecordsValidValues) {
  RequestedOptions o;
  record_option(o, OptionId::kDtrain, nullptr);
  EXPECT_EQ(o.dtrain, "");
  EXPECT_FALSE(o.any_setting());
  o.dtrain.reset();
  record_option(o, OptionId::kDtrain, "(null)");  // how #SBATCH --dtrain reaches srun
  EXPECT_EQ(o.dtrain, "");
  o.dtrain.reset();
  record_option(o, OptionId::kDtrain, "");  // how a bare srun --dtrain reaches slurmstepd
  EXPECT_EQ(o.dtrain, "");
  record_option(o, OptionId::kDtrain, "identity,best-effort");
  EXPECT_EQ(o.dtrain, "identity,best-effort");
  record_option(o, OptionId::kGpu, "identity");
  record_option(o, OptionId::kGpuVisibility, "own-first");
  record_option(o, OptionId::kCpu, "none");
  record_option(o, OptionId::kNic, "all");
  record_option(o, OptionId::kFramework, "torch");
  record_option(o, OptionId::kRunDir, "/scratch/run");
  record_option(o, OptionId::kVerbose, nullptr);
  EXPECT_EQ(o.gpu, "identity");
  EXPECT_EQ(o.gpu_visibility, "own-first");
  EXPECT_EQ(o.cpu, "none");
  EXPECT_EQ(o.nic, "all");
  EXPECT_EQ(o.framework, "torch");
  EXPECT_EQ(o.run_dir, "/scratch/run");
  EXPECT_TRUE(o.verbose);
  EXPECT_TRUE(o.any_setting());
  // slurmstepd calls the callback twice with the same value; a later value replaces.
  record_option(o, OptionId::kGpu, "identity");
  record_option(o, OptionId::kGpu, "none");
  EXPECT_EQ(o.gpu, "none");
}

TEST(Options, EveryBadValueNamesTheOptionTheValueAndTheChoices) {
  EXPECT_EQ(message_of(OptionId::kGpu, "nearest"),
            "dtrain: affinity: --dtrain-gpu: unknown policy \"nearest\"; expected closest, "
            "identity or none, got \"nearest\"");
  EXPECT_EQ(message_of(OptionId::kGpuVisibility, "all"),
            "dtrain: affinity: --dtrain-gpu-visibility: unknown policy \"all\"; expected own or "
            "own-first, got \"all\"");
  EXPECT_EQ(message_of(OptionId::kCpu, "socket"),
            "dtrain: affinity: --dtrain-cpu: unknown policy \"socket\"; expected numa or none, "
            "got \"socket\"");
  EXPECT_EQ(message_of(OptionId::kNic, "nearest"),
            "dtrain: affinity: --dtrain-nic: unknown policy \"nearest\"; expected closest, all or "
            "none, got \"nearest\"");
  EXPECT_EQ(message_of(OptionId::kFramework, "pytorch"),
            "dtrain: --dtrain-framework: unknown framework \"pytorch\"; expected torch, "
            "tensorflow, jax, horovod or none, got \"pytorch\"");
  EXPECT_EQ(message_of(OptionId::kRunDir, ""),
            "dtrain: --dtrain-run-dir: expected a directory for the rank logs, got \"\"");
  EXPECT_NE(message_of(OptionId::kDtrain, "fast").find("dtrain: --dtrain: unknown word \"fast\""),
            std::string::npos);
  EXPECT_NE(message_of(OptionId::kGpu, "").find("got \"\""), std::string::npos);
}

}  // namespace
}  // namespace dtrain::spank
