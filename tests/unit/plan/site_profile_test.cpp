#include "plan/site_profile.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::plan {
namespace {

std::string profile_errors(const std::string& text) {
  try {
    parse_site_profile(text, "site.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string spec_errors(const std::string& text) {
  try {
    parse_job_spec(text, "site.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

// A profile's `env` is read by the spec's reader: the same names are refused with the same
// message, field path included (both texts put `env` on line 4).
TEST(SiteProfile, EnvIsReadByTheSpecsReader) {
  const std::string profile = "name: x\nscheduler: slurm\nlauncher: srun\n";
  const std::string spec = "name: x\ncommand: [a]\nsite_env: true\n";
  for (const std::string env :
       {"env: {9LIVES: 1}\n", "env: {\"A B\": 1}\n", "env: {DTRAIN_RANK: 0}\n", "env: {A: [1]}\n",
        "env: [A]\n", "env: {A: 1, A: 2}\n"}) {
    const std::string from_profile = profile_errors(profile + env);
    EXPECT_NE(from_profile, "(no error)") << env;
    EXPECT_EQ(from_profile, spec_errors(spec + env)) << env;
  }
  EXPECT_EQ(profile_errors(profile + "env: {9LIVES: 1}\n"),
            "site.yaml:4: env.9LIVES: expected a variable name of letters, digits and '_' not "
            "starting with a digit, got \"9LIVES\"");
}

TEST(SiteProfile, ReadsEveryField) {
  const SiteProfile p = parse_site_profile(
      "name: mine\ndescription: my cluster\nscheduler: pbspro\nlauncher: mpiexec\n"
      "select: system=polaris\nplace: scatter\ngpus_per_node: 4\ncores_per_node: 32\n"
      "threads_per_core: 2\nrequired: [account, walltime]\ndefault_queue: debug\n"
      "default_filesystems: [home]\nenv: {NCCL_DEBUG: WARN}\ntopology: node.xml\n",
      "site.yaml");
  EXPECT_EQ(p.scheduler, "pbspro");
  EXPECT_EQ(p.launcher, "mpiexec");
  EXPECT_EQ(p.select, "system=polaris");
  EXPECT_EQ(p.place, "scatter");
  EXPECT_EQ(p.threads_per_core, 2);
  EXPECT_EQ(p.required, (std::vector<std::string>{"account", "walltime"}));
  ASSERT_EQ(p.env.size(), 1u);
  EXPECT_EQ(p.env[0].first, "NCCL_DEBUG");
  EXPECT_EQ(p.topology, "node.xml");
  EXPECT_EQ(profile_errors("name: x\nscheduler: slurm\nlauncher: srun\nselect: \"a b\"\n"),
            "site.yaml:4: select: expected PBS resources such as system=polaris, got \"a b\"");
  EXPECT_EQ(profile_errors("scheduler: slurm\n"),
            "site.yaml: name: required field is missing\n"
            "site.yaml: launcher: required field is missing");
}

// docs/spec.md's "Site profiles" paragraph names every field of the reader table.
TEST(SiteProfile, TheDocsNameEveryField) {
  std::ifstream doc(DTRAIN_FIXTURE_DIR "/../../docs/spec.md");
  ASSERT_TRUE(doc) << "docs/spec.md";
  std::stringstream text;
  text << doc.rdbuf();
  const std::string all = text.str();
  const std::string section = all.substr(all.find("## Site profiles"));
  for (const auto& field : site_profile_fields()) {
    EXPECT_NE(section.find("`" + field + "`"), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace dtrain::plan
