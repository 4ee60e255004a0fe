// The adapter registry and the interface's defaults.
#include "plan/schedulers/scheduler.hpp"

#include <gtest/gtest.h>

namespace dtrain::plan {
namespace {

// The words `scheduler:` accepts, in the order messages list them.
TEST(Scheduler, TheBuiltInAdaptersComeFirstInAFixedOrder) {
  const std::vector<std::string> builtin = {"local",  "slurm", "pbspro",
                                            "cobalt", "pbs",   "kubernetes"};
  const std::vector<std::string> names = scheduler_names();
  ASSERT_GE(names.size(), builtin.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 6), builtin);
  for (const auto& name : builtin) {
    SiteProfile site;
    site.scheduler = name;
    EXPECT_EQ(scheduler_of(site).name(), name);
    EXPECT_EQ(scheduler_adapter(name), &scheduler_of(site));
  }
  EXPECT_EQ(scheduler_adapter("lsf"), nullptr);
}

TEST(Scheduler, AnUnregisteredNameIsABug) {
  SiteProfile site;
  site.scheduler = "lsf";
  EXPECT_THROW(scheduler_of(site), std::logic_error);
  EXPECT_THROW(register_scheduler(*scheduler_adapter("slurm")), std::logic_error);
}

TEST(Scheduler, CommandsASchedulerLacksAreABugToAskFor) {
  const SchedulerAdapter& k8s = *scheduler_adapter("kubernetes");
  try {
    k8s.release_command("pi");
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "dtrain: release_command for scheduler kubernetes");
  }
  EXPECT_THROW(scheduler_adapter("slurm")->submit_command("m.yaml"), std::logic_error);
  EXPECT_TRUE(scheduler_adapter("slurm")->failed_nodes_command("").empty());
}

// Only an adapter that can shrink a job answers the elastic restart's questions; planning refuses
// an elastic range elsewhere, so asking one that cannot is a bug.
TEST(Scheduler, OnlyAShrinkingSchedulerHasElasticRestarts) {
  for (const auto& name : scheduler_names()) {
    const SchedulerAdapter& a = *scheduler_adapter(name);
    if (a.can_shrink()) continue;
    EXPECT_THROW(a.allocation({{"PBS_NODEFILE", "/var/spool/pbs/aux/1"}}), std::logic_error)
        << name;
    EXPECT_THROW(a.lost_nodes_command({"n[1-2]", {"n1", "n2"}}), std::logic_error) << name;
    EXPECT_THROW(a.parse_lost_nodes("n2|down|x\n"), std::logic_error) << name;
    EXPECT_THROW(a.shrink_launch({"mpiexec", "-n", "8", "./train"}, 1, {"n2"}), std::logic_error)
        << name;
    EXPECT_THROW(a.shrunk_launch_unset(), std::logic_error) << name;
  }
  EXPECT_FALSE(scheduler_adapter("pbspro")->can_shrink());
  EXPECT_TRUE(scheduler_adapter("slurm")->can_shrink());
}

TEST(Scheduler, JobNumber) {
  EXPECT_EQ(job_number("1234.polaris-pbs-01"), "1234");
  EXPECT_EQ(job_number("77"), "77");
}

}  // namespace
}  // namespace dtrain::plan
