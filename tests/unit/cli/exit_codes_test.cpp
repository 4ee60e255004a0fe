#include "exit_codes.hpp"

#include <gtest/gtest.h>

#include <dtrain/dtrain.hpp>
#include <stdexcept>
#include <string>
#include <system_error>

#include "affinity/errors.hpp"
#include "common/errors.hpp"
#include "launch/launcher_env.hpp"
#include "plan/errors.hpp"
#include "plan/schedulers/scheduler.hpp"
#include "records/metric_record.hpp"

namespace dtrain::cli {
namespace {

struct Outcome {
  int status = -1;
  std::string stderr_text;
};

template <typename Exception>
Outcome guarded_throw(const Exception& e) {
  ::testing::internal::CaptureStderr();
  const int status = run_guarded([&]() -> int { throw e; });
  return {status, ::testing::internal::GetCapturedStderr()};
}

// docs/errors.md: 2 for bad input, 1 for another failure, 70 for a bug. The funnel decides by
// the error root's category, so every library's input errors exit 2 without a case of their own.
TEST(RunGuarded, BadInputExitsTwo) {
  EXPECT_EQ(guarded_throw(UsageError("dtrain: logs: --rank: bad")).status, kExitUsage);
  EXPECT_EQ(guarded_throw(affinity::PolicyError("dtrain: affinity: --gpu: bad")).status,
            kExitUsage);
  EXPECT_EQ(guarded_throw(affinity::TopologyError("dtrain: topology: bad")).status, kExitUsage);
  EXPECT_EQ(guarded_throw(launch::LauncherEnvError("dtrain: launcher environment: bad")).status,
            kExitUsage);
  EXPECT_EQ(
      guarded_throw(records::MetricFormatError("dtrain: stats: rank-00001.jsonl:2: bad")).status,
      kExitUsage);
  const Outcome spec = guarded_throw(plan::SpecError({{"job.yaml", 3, "nodes", "expected 1"}}));
  EXPECT_EQ(spec.status, kExitUsage);
  EXPECT_EQ(spec.stderr_text, "job.yaml:3: nodes: expected 1\ndtrain: 1 error in the job spec\n");
}

TEST(RunGuarded, FailuresExitOne) {
  const Outcome submit = guarded_throw(plan::SubmitError("dtrain: `sbatch` exited with status 1"));
  EXPECT_EQ(submit.status, kExitFailure);
  EXPECT_EQ(submit.stderr_text, "dtrain: `sbatch` exited with status 1\n");
  EXPECT_EQ(guarded_throw(std::system_error(std::make_error_code(std::errc::io_error))).status,
            kExitFailure);
  EXPECT_EQ(guarded_throw(std::logic_error("oops")).status, kExitSoftware);
}

// libdtrain's own error (dtrain doctor calls init()): kInvalid is a bad argument or setting, as
// docs/errors.md promises; the others are failures.
TEST(RunGuarded, LibdtrainErrorsExitByTheirCode) {
  const Outcome invalid = guarded_throw(
      Error(Error::Code::kInvalid, "dtrain: DTRAIN_BOOTSTRAP: expected pmix, mpi or single"));
  EXPECT_EQ(invalid.status, kExitUsage);
  EXPECT_EQ(invalid.stderr_text, "dtrain: DTRAIN_BOOTSTRAP: expected pmix, mpi or single\n");
  EXPECT_EQ(guarded_throw(Error(Error::Code::kComm, "dtrain: comm")).status, kExitFailure);
  EXPECT_EQ(guarded_throw(Error(Error::Code::kSystem, "dtrain: system")).status, kExitFailure);
}

}  // namespace
}  // namespace dtrain::cli
