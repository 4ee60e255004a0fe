// The spec's run settings (records:, hang_after:, on_hang:; docs/spec.md): read with the parsers
// the ranks read DTRAIN_RECORDS, DTRAIN_HANG_AFTER and DTRAIN_ON_HANG with
// (common/run_settings.hpp), refused with the field, the value and what was expected, and exported
// to every rank by every scheduler's script (and the MPIJob's manifest).
#include <gtest/gtest.h>

#include <string>

#include "plan/command_spec.hpp"
#include "support.hpp"

namespace dtrain::plan {
namespace {

using testing::builtin_profile;
using testing::plan_spec;
using testing::spec_errors;
using Env = std::vector<std::pair<std::string, std::string>>;

const std::string kJob = "name: x\ncommand: [a]\n";

TEST(SpecRunSettings, AreReadWithTheRanksParsers) {
  const JobSpec spec =
      parse_job_spec(kJob + "records: steps\nhang_after: 2m\non_hang: wait\n", "job.yaml");
  EXPECT_EQ(spec.records, RecordDetail::kSteps);
  EXPECT_EQ(spec.hang_after, (HangAfter{false, std::chrono::seconds(120)}));
  EXPECT_EQ(spec.on_hang, OnHang::kWait);
  EXPECT_EQ(parse_job_spec(kJob + "hang_after: 45\n", "job.yaml").hang_after->after.count(), 45);
  EXPECT_TRUE(parse_job_spec(kJob + "hang_after: off\n", "job.yaml").hang_after->off);
  const JobSpec plain = parse_job_spec(kJob, "job.yaml");
  EXPECT_FALSE(plain.records || plain.hang_after || plain.on_hang);
}

TEST(SpecRunSettings, ABadValueIsNamedWithWhatWasExpected) {
  EXPECT_EQ(spec_errors(kJob + "hang_after: soon\n"),
            "job.yaml:3: hang_after: expected a duration like 30s or 2m (whole seconds, minutes "
            "or hours from 1 s to 24 h; a bare number is seconds) or off, got \"soon\"");
  EXPECT_EQ(spec_errors(kJob + "records: all\non_hang: kill\nhang_after: [30]\n"),
            "job.yaml:3: records: expected \"intervals\" (a record per interval of steps, the "
            "default) or \"steps\" (a record per step), got \"all\"\n"
            "job.yaml:4: on_hang: expected abort (end the rank the hang watch names, so the job "
            "ends) or wait (only name it), got \"kill\"\n"
            "job.yaml:5: hang_after: expected a string, got a list");
  EXPECT_EQ(spec_errors(kJob, {{"hang_after=0"}, "", {}}),
            "--set hang_after=0: hang_after: expected a duration like 30s or 2m (whole seconds, "
            "minutes or hours from 1 s to 24 h; a bare number is seconds) or off, got \"0\"");
}

// Under env: the variables are checked as the ranks would check them, and a field and its
// variable together are refused (the variable would reach the ranks twice).
TEST(SpecRunSettings, TheVariablesUnderEnvAreCheckedAndNotSetTwice) {
  EXPECT_EQ(spec_errors(kJob + "env:\n  DTRAIN_HANG_AFTER: soon\n  DTRAIN_RECORDS: \"\"\n"),
            "job.yaml:4: env.DTRAIN_HANG_AFTER: expected a duration like 30s or 2m (whole "
            "seconds, minutes or hours from 1 s to 24 h; a bare number is seconds) or off, got "
            "\"soon\"");
  EXPECT_EQ(spec_errors(kJob + "env: {DTRAIN_ON_HANG: kill}\n"),
            "job.yaml:3: env.DTRAIN_ON_HANG: expected abort (end the rank the hang watch names, "
            "so the job ends) or wait (only name it), got \"kill\"");
  EXPECT_EQ(spec_errors(kJob + "records: steps\nenv:\n  DTRAIN_RECORDS: intervals\n"),
            "job.yaml:5: env.DTRAIN_RECORDS: expected it unset when the spec has records: (which "
            "exports DTRAIN_RECORDS itself), got \"intervals\"");
  EXPECT_EQ(spec_errors(kJob + "env: {DTRAIN_RECORDS: steps}\n"), "(no error)");
}

// Each given field becomes its variable after the spec's env and before dtrain's own; none is
// exported without its field, so the ranks' defaults are unchanged.
TEST(SpecRunSettings, ExportedOnlyWhenGiven) {
  SiteProfile local = builtin_profile("local");
  local.env = {{"DTRAIN_HANG_AFTER", "60"}};
  const JobSpec spec = parse_job_spec(
      kJob + "env: {MINE: 1}\nrecords: steps\nhang_after: 2m\non_hang: wait\n", "job.yaml");
  EXPECT_EQ(plan_spec(spec, local).env,
            (Env{{"DTRAIN_HANG_AFTER", "60"},
                 {"MINE", "1"},
                 {"DTRAIN_RECORDS", "steps"},
                 {"DTRAIN_HANG_AFTER", "120"},
                 {"DTRAIN_ON_HANG", "wait"},
                 {"PYTHONUNBUFFERED", "1"},
                 {"DTRAIN_JOB_ID", "20261122-100000-42"},
                 {"DTRAIN_RUN_DIR", "/home/ada/runs/pi-20261122-100000-42"}}));
  const std::string script = plan_spec(parse_job_spec(kJob, "job.yaml"), local).script;
  EXPECT_EQ(script.find("DTRAIN_RECORDS"), std::string::npos) << script;
  EXPECT_EQ(script.find("DTRAIN_ON_HANG"), std::string::npos) << script;
}

// Every built-in site's script exports them before the launch (the MPIJob's manifest gives them
// to the launcher's container, and its mpirun passes each on with -x).
TEST(SpecRunSettings, EverySiteExportsThem) {
  for (const auto& site : builtin_sites()) {
    const JobSpec spec =
        parse_job_spec(kJob + "site: " + site +
                           "\naccount: a\nwalltime: 30\nfilesystems: [home]\nimage: i\n"
                           "records: steps\nhang_after: 5s\non_hang: wait\n",
                       "job.yaml");
    const LaunchPlan plan = plan_spec(spec, builtin_profile(site));
    const std::string& s = plan.script;
    if (builtin_profile(site).scheduler == "kubernetes") {
      EXPECT_NE(s.find("- name: DTRAIN_RECORDS\n                  value: steps\n"
                       "                - name: DTRAIN_HANG_AFTER\n                  value: \"5\"\n"
                       "                - name: DTRAIN_ON_HANG\n                  value: wait\n"),
                std::string::npos)
          << s;
      // The launcher's command is a list of words here (no setup): mpirun's -x NAME each.
      const auto mpirun = s.find("- mpirun\n");
      ASSERT_NE(mpirun, std::string::npos) << s;
      for (const char* v : {"DTRAIN_RECORDS", "DTRAIN_HANG_AFTER", "DTRAIN_ON_HANG"}) {
        EXPECT_NE(s.find(std::string("- -x\n                - ") + v + "\n", mpirun),
                  std::string::npos)
            << v << "\n"
            << s;
      }
      continue;
    }
    const auto exports = s.find(
        "export DTRAIN_RECORDS=steps\nexport DTRAIN_HANG_AFTER=5\n"
        "export DTRAIN_ON_HANG=wait\n");
    ASSERT_NE(exports, std::string::npos) << site << "\n" << s;
    EXPECT_LT(exports, s.find("run-rank")) << site;
  }
}

// `dtrain run --records steps --hang-after 2m --on-hang wait`: the same fields, a bad value named
// with its flag.
TEST(SpecRunSettings, DtrainRunsFlagsAreTheFields) {
  CommandJob job;
  job.command = {"./pi"};
  job.records = "steps";
  job.hang_after = "2m";
  job.on_hang = "wait";
  const JobSpec spec =
      parse_job_spec(command_spec_text(job), "(flags)", command_spec_overrides(job));
  EXPECT_EQ(spec.records, RecordDetail::kSteps);
  EXPECT_EQ(spec.hang_after->after.count(), 120);
  EXPECT_EQ(spec.on_hang, OnHang::kWait);
  job.hang_after = "soon";
  EXPECT_EQ(spec_errors(command_spec_text(job), command_spec_overrides(job)),
            "--hang-after soon: hang_after: expected a duration like 30s or 2m (whole seconds, "
            "minutes or hours from 1 s to 24 h; a bare number is seconds) or off, got \"soon\"");
}

}  // namespace
}  // namespace dtrain::plan
