#include "run_summary.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"
#include "records/record_fields.hpp"

namespace dtrain::cli {
namespace {

void read_plan_json(const std::string& text, const std::string& path, RunSummary& out) {
  // The spec readers' UTF-8 check (plan/errors.hpp), in their words: JSON holds only UTF-8, and
  // a plan.json with a byte that begins no character was refused as "not JSON".
  if (const std::size_t at = plan::invalid_utf8_at(text); at != std::string::npos) {
    throw RunSummaryError("dtrain: " + path + ": expected UTF-8 text, got byte " +
                          plan::escape_for_message(text.substr(at, 1)) + " at offset " +
                          std::to_string(at) + ", which begins no UTF-8 character");
  }
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto fail = [](const std::string& message) { throw RunSummaryError(message); };
  if (j.is_discarded()) {
    throw RunSummaryError("dtrain: " + path +
                          ": expected a launch plan (JSON), got text that is "
                          "not JSON");
  }
  if (!j.is_object()) {
    throw RunSummaryError("dtrain: " + path + ": expected a JSON object, got " +
                          records::shown_value(j));
  }
  const records::RecordFields plan(j, path, fail);
  // A plan.json written by hand may leave any field out; what it holds must be what dtrain writes.
  if (plan.has("job")) {
    if (!j["job"].is_object()) {
      plan.fail("field \"job\": expected an object, got " + records::shown_value(j["job"]));
    }
    const records::RecordFields job(j["job"], path + ": \"job\"", fail);
    if (job.has("name")) out.job = job.text("name");
    if (job.has("id")) out.id = job.text("id");
    if (job.has("site")) out.site = job.text("site");
  }
  if (plan.has("nodes"))
    out.nodes = static_cast<int>(plan.integer("nodes", 1, records::kMaxIntField));
  if (plan.has("ranks_per_node")) {
    out.ranks_per_node = static_cast<int>(plan.integer("ranks_per_node", 1, records::kMaxIntField));
  }
  if (plan.has("world_size")) {
    out.world_size = static_cast<int>(plan.integer("world_size", 0, records::kMaxIntField));
  }
}

}  // namespace

std::string run_label(const std::string& run_dir) {
  namespace fs = std::filesystem;
  std::string label = fs::path(run_dir).lexically_normal().filename().string();
  if (label.empty()) label = fs::path(run_dir).parent_path().filename().string();
  return label;
}

RunSummary parse_run_summary(const std::string& run_dir,
                             const std::optional<std::string>& plan_json,
                             const std::string& plan_path,
                             const std::optional<std::string>& spec_yaml,
                             const std::string& spec_path) {
  RunSummary out;
  out.label = run_label(run_dir);
  if (plan_json) read_plan_json(*plan_json, plan_path, out);
  if (spec_yaml) {
    out.gpus_per_rank =
        plan::parse_spec_fields(*spec_yaml, spec_path, {"gpus_per_rank"}).gpus_per_rank;
  }
  return out;
}

report::ScalingRun scaling_run(const RunSummary& summary, const report::RunStats& stats) {
  report::ScalingRun run;
  run.label = summary.label;
  run.job = summary.job;
  run.ranks = static_cast<int>(stats.ranks.size());
  run.samples_per_second = stats.total_samples_per_second;
  if (summary.gpus_per_rank) run.gpus = run.ranks * *summary.gpus_per_rank;
  return run;
}

}  // namespace dtrain::cli
