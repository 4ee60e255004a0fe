#include "run_dir.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "affinity/input_file.hpp"
#include "plan/errors.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::cli {
namespace fs = std::filesystem;

std::string read_spec_file(const std::string& path) {
  return affinity::read_input_file(path, "a job spec (YAML)", plan::kMaxSpecBytes);
}

namespace {

void write_file(const fs::path& path, const std::string& text, fs::perms perms) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    throw std::runtime_error("dtrain: cannot write " + path.string() + ": " + std::strerror(errno));
  }
  fs::permissions(path, perms);
}

}  // namespace

void write_run_dir(const plan::LaunchPlan& plan, const std::string& spec_text) {
  const fs::path dir(plan.run_dir);
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    throw plan::UsageError("dtrain: run directory " + plan.run_dir +
                           " already exists and is not empty; expected a new directory "
                           "(a previous run's files are never overwritten)");
  }
  fs::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error("dtrain: cannot create run directory " + plan.run_dir + ": " +
                             ec.message());
  }
  using fs::perms;
  const auto rw = perms::owner_read | perms::owner_write | perms::group_read | perms::others_read;
  write_file(dir / "job.yaml", spec_text, rw);
  const bool is_script = plan.script_name == plan::kScriptName;  // not a manifest
  write_file(dir / plan.script_name, plan.script,
             is_script ? rw | perms::owner_exec | perms::group_exec | perms::others_exec : rw);
  write_file(dir / "plan.json", plan::plan_to_json(plan).dump(2) + "\n", rw);
}

void write_plan_json(const plan::LaunchPlan& plan) {
  using fs::perms;
  write_file(fs::path(plan.run_dir) / "plan.json", plan::plan_to_json(plan).dump(2) + "\n",
             perms::owner_read | perms::owner_write | perms::group_read | perms::others_read);
}

}  // namespace dtrain::cli
