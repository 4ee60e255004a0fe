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

// A filesystem name becomes part of one scheduler directive (`#PBS -l filesystems=...`): a space
// would add an option of the user's to the job ("home -A evil" gave `-A evil`).
TEST(SiteProfile, FilesystemNamesAreTokens) {
  const std::string head = "name: x\nscheduler: pbspro\nlauncher: mpiexec\n";
  EXPECT_EQ(profile_errors(head + "default_filesystems: [\"home -A evil\", \"a$(touch b)\"]\n"),
            "site.yaml:4: default_filesystems[0]: expected a filesystem name such as eagle (1 to "
            "64 letters, digits, '_', '-' or '.'), got \"home -A evil\"\n"
            "site.yaml:4: default_filesystems[1]: expected a filesystem name such as eagle (1 to "
            "64 letters, digits, '_', '-' or '.'), got \"a$(touch b)\"");
  EXPECT_EQ(
      parse_site_profile(head + "default_filesystems: [home, eagle_fs, grand-2.x]\n", "site.yaml")
          .default_filesystems,
      (std::vector<std::string>{"home", "eagle_fs", "grand-2.x"}));
}

// The readers take every value as the text written: a tag (`!!binary`, `!!str`, a local `!x`)
// would be silently ignored, so it is refused, in a profile as in a spec.
TEST(SiteProfile, YamlTagsAreRefused) {
  const std::string head = "name: x\nscheduler: slurm\nlauncher: srun\n";
  EXPECT_EQ(profile_errors(head + "description: !!binary aGVsbG8=\nconstraint: !local gpu\n"),
            "site.yaml:4: description: expected a value without a YAML tag, got the tag !!binary "
            "(dtrain reads every value as the text written)\n"
            "site.yaml:5: constraint: expected a value without a YAML tag, got the tag !local "
            "(dtrain reads every value as the text written)");
  EXPECT_EQ(profile_errors(head + "env: !!map {A: !!str 1}\n"),
            "site.yaml:4: env: expected a value without a YAML tag, got the tag !!map (dtrain "
            "reads every value as the text written)\n"
            "site.yaml:4: env.A: expected a value without a YAML tag, got the tag !!str (dtrain "
            "reads every value as the text written)");
  // Quotes are no tag.
  EXPECT_EQ(profile_errors(head + "description: 'a \"quoted\" one'\n"), "(no error)");
}

TEST(SiteProfile, TextMustBeUtf8) {
  EXPECT_EQ(profile_errors("name: x\nscheduler: slurm\nlauncher: srun\ndescription: caf\xe9\n"),
            "site.yaml:4: description: expected UTF-8 text, got \"caf\\xe9\" (byte \\xe9 at "
            "offset 3 begins no UTF-8 character)");
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
