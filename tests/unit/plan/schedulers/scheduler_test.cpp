// The adapter registry and the interface's defaults.
#include "plan/schedulers/scheduler.hpp"

#include <gtest/gtest.h>

namespace dtrain::plan {
namespace {

TEST(Scheduler, EverySchedulerHasItsAdapter) {
  for (Scheduler s : {Scheduler::kLocal, Scheduler::kSlurm, Scheduler::kPbsPro, Scheduler::kCobalt,
                      Scheduler::kPbs, Scheduler::kKubernetes}) {
    const SchedulerAdapter& adapter = scheduler_adapter(s);
    EXPECT_EQ(adapter.id(), s);
    EXPECT_EQ(adapter.name(), scheduler_name(s));
    EXPECT_EQ(scheduler_adapter(adapter.name()), &adapter);
  }
  EXPECT_EQ(scheduler_adapter("lsf"), nullptr);
}

TEST(Scheduler, CommandsASchedulerLacksAreABugToAskFor) {
  const SchedulerAdapter& k8s = scheduler_adapter(Scheduler::kKubernetes);
  try {
    k8s.release_command("pi");
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "dtrain: release_command for scheduler kubernetes");
  }
  EXPECT_THROW(scheduler_adapter(Scheduler::kSlurm).submit_command("m.yaml"), std::logic_error);
  EXPECT_TRUE(scheduler_adapter(Scheduler::kSlurm).failed_nodes_command("").empty());
}

TEST(Scheduler, JobNumber) {
  EXPECT_EQ(job_number("1234.polaris-pbs-01"), "1234");
  EXPECT_EQ(job_number("77"), "77");
}

}  // namespace
}  // namespace dtrain::plan
