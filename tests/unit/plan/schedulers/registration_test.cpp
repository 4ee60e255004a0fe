// Adding a scheduler is one adapter file and its template: this test-only "testq" scheduler
// registers itself from this file, touching no list of dtrain's, and a site profile naming it is
// read and planned like a built-in one.
#include <gtest/gtest.h>

#include <string>

#include "../support.hpp"
#include "plan/errors.hpp"
#include "plan/job_spec.hpp"
#include "plan/schedulers/batch_script.hpp"
#include "plan/schedulers/scheduler.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::plan {
namespace {

class Testq final : public QsubAdapter {
 public:
  std::string_view name() const override { return "testq"; }
  std::vector<std::string> launchers() const override { return {"mpirun"}; }
  std::string template_name() const override { return "testq.sh.tmpl"; }
  std::string requeue_command() const override { return "testq-requeue \"$TESTQ_JOBID\""; }
  std::vector<std::string> directives(const JobSpec& spec, const SiteProfile&,
                                      const JobShape& s) const override {
    return prefixed({"-n " + std::to_string(s.nodes), "-N " + spec.name}, "#TESTQ ");
  }
  void add_launcher(const PlanDraft& d, TemplateValues& values) const override {
    values["launcher"] = mpirun_launcher(d, "--hostfile \"$TESTQ_NODEFILE\"");
  }
};

const Testq kTestq;
const bool kRegistered = (register_scheduler(kTestq), true);

// A batch template uses every value the shared skeleton fills in.
constexpr std::string_view kTemplate =
    "#!/bin/bash\n{{directives}}\n# dtrain {{version}}: {{name}}, {{nodes}} x {{ranks_per_node}} "
    "on "
    "{{site}}\ncd {{workdir}}\nexport DTRAIN_RUN_DIR={{run_dir}}\n{{env_exports}}{{setup}}"
    "launch=({{launcher}} {{bind_command}} {{rank_command}})\n{{run_launch}}";

std::string_view templates(std::string_view name) {
  return name == "testq.sh.tmpl" ? kTemplate : testing::template_text(name);
}

TEST(Registration, ARegisteredSchedulerIsAcceptedListedAndPlanned) {
  ASSERT_TRUE(kRegistered);
  EXPECT_EQ(scheduler_names().back(), "testq");
  const SiteProfile site =
      parse_site_profile("name: lab\nscheduler: testq\nlauncher: mpirun\n", "lab.yaml");
  EXPECT_EQ(&scheduler_of(site), &kTestq);

  const JobSpec spec = parse_job_spec(
      "name: pi\nsite: lab.yaml\nnodes: 2\nranks_per_node: 1\ncommand: [./pi]\n"
      "checkpoint: {signal: USR1, grace: 60, requeue: true}\n",
      "job.yaml");
  const LaunchPlan planned = plan(spec, "job.yaml", site, testing::fixed_inputs(), templates);
  EXPECT_EQ(planned.script.rfind(
                "#!/bin/bash\n#TESTQ -n 2\n#TESTQ -N pi\n# dtrain 0.1.0: pi, 2 x 1 on lab\n", 0),
            0u)
      << planned.script;
  EXPECT_NE(planned.script.find("launch=(mpirun -np 2 -npernode 1 --hostfile \"$TESTQ_NODEFILE\""),
            std::string::npos)
      << planned.script;
  EXPECT_NE(planned.script.find("testq-requeue \"$TESTQ_JOBID\""), std::string::npos)
      << planned.script;
  EXPECT_EQ(scheduler_of(site).submit_held_command("job.sh"), (Argv{"qsub", "-h", "job.sh"}));
}

TEST(Registration, ALauncherTheAdapterDoesNotDriveIsRefused) {
  ASSERT_TRUE(kRegistered);
  try {
    parse_site_profile("name: lab\nscheduler: testq\nlauncher: srun\n", "lab.yaml");
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("launcher srun is not supported with scheduler testq"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dtrain::plan
