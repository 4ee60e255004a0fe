// What the plan tests share: the messages a bad job spec gets, golden files (hwloc's
// test-hwloc-calc pattern; DTRAIN_UPDATE_GOLDEN=1 rewrites them, and the diff is then reviewed like
// any other change), the templates and built-in site profiles of the source tree, and fixed run
// inputs, so a plan depends on its spec alone.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"
#include "plan/launch_plan.hpp"
#include "plan/planner.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::plan::testing {

inline std::string read(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every message the user would see for the job spec `text` (read as job.yaml), one per line;
// "(no error)" when it parses.
inline std::string spec_errors(const std::string& text, const SpecOverrides& overrides = {}) {
  try {
    parse_job_spec(text, "job.yaml", overrides);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

inline void expect_golden(const std::string& path, const std::string& actual) {
  const char* update = std::getenv("DTRAIN_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << actual;
    return;
  }
  EXPECT_EQ(read(path), actual) << "golden file " << path
                                << " differs; rerun with DTRAIN_UPDATE_GOLDEN=1 to update it";
}

// templates/<name> of the source tree, read once.
inline std::string_view template_text(std::string_view name) {
  static std::map<std::string, std::string, std::less<>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(std::string(name), read(DTRAIN_TEMPLATE_DIR "/" + std::string(name))).first;
  }
  return it->second;
}

inline SiteProfile builtin_profile(const std::string& name) {
  return parse_site_profile(template_text("sites/" + name + ".yaml"), name);
}

// A local run on "node17", 2 cores, as root, unless a test says otherwise.
inline PlanInputs fixed_inputs() {
  PlanInputs in;
  in.job_id = "20261122-100000-42";
  in.run_dir = "/home/ada/runs/pi-20261122-100000-42";
  in.workdir = "/home/ada/my project";
  in.dtrain_exe = "/opt/dtrain/bin/dtrain";
  in.version = "0.1.0";
  in.machine = {"node17", 2, true};
  return in;
}

inline LaunchPlan plan_spec(const JobSpec& spec, const SiteProfile& site,
                            const PlanInputs& inputs = fixed_inputs()) {
  return plan(spec, "job.yaml", site, inputs, template_text);
}

// tests/fixtures/golden/<dir>: job.yaml planned on its site gives expected.sh (or .yaml) and
// expected.plan.json byte for byte.
inline void expect_golden_plan(const std::string& dir_name,
                               const PlanInputs& inputs = fixed_inputs(),
                               const std::string& script_file = "expected.sh") {
  const std::string dir = DTRAIN_FIXTURE_DIR "/golden/" + dir_name;
  const JobSpec spec = parse_job_spec(read(dir + "/job.yaml"), "job.yaml");
  const LaunchPlan plan = plan_spec(spec, builtin_profile(spec.site), inputs);
  expect_golden(dir + "/" + script_file, plan.script);
  expect_golden(dir + "/expected.plan.json", plan_to_json(plan).dump(2) + "\n");
  if (script_file.ends_with(".sh")) {
    const std::string check = "bash -n '" + dir + "/" + script_file + "'";
    EXPECT_EQ(std::system(check.c_str()), 0)
        << "bash finds a syntax error in " << dir << "/" << script_file;
  }
}

}  // namespace dtrain::plan::testing
