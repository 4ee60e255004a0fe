#include "plan/schedulers/batch_script.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "plan/errors.hpp"
#include "plan/render.hpp"
#include "records/run_dir_layout.hpp"

namespace dtrain::plan {
namespace {

std::string two_digits(long v) { return (v < 10 ? "0" : "") + std::to_string(v); }

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::string quoted(std::string_view output) {
  std::string text(trim(output));
  if (text.size() > 400) text = text.substr(0, 400) + "...";
  return text.empty() ? "nothing" : "\"" + text + "\"";
}

std::string indented(const std::string& lines) {
  std::string out;
  std::size_t start = 0;
  while (start < lines.size()) {
    const std::size_t end = std::min(lines.find('\n', start), lines.size());
    out += "  " + lines.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

// The comment over the checkpoint block, and the timer that sends the signal when the scheduler
// does not (`no_signal`: what the scheduler does instead, "" when it signals by itself).
std::pair<std::string, std::string> checkpoint_warning(const PlanDraft& d,
                                                       const std::string& no_signal) {
  const CheckpointSpec& c = d.spec.checkpoint;
  const std::string sig = "SIG" + c.signal;
  const std::string grace = std::to_string(c.grace_seconds) + " s";
  if (no_signal.empty()) {
    return {"# checkpoint: the scheduler sends " + sig + " " + grace + " before the end.", ""};
  }
  if (!d.spec.walltime_seconds) {
    return {"# checkpoint: " + no_signal +
                ".\n# The spec sets no walltime to count from, so only " + sig +
                " sent to this script by hand reaches\n# the ranks.",
            ""};
  }
  const std::string at = std::to_string(*d.spec.walltime_seconds - c.grace_seconds);
  return {"# checkpoint: " + no_signal + ".\n# `timeout` sends " + sig + " " + grace +
              " before it instead: " + at +
              " s into the job, counted from this\n# script's start ($SECONDS: the setup above "
              "included).",
          checkpoint_timer(c, "\"$((" + at + " > SECONDS ? " + at + " - SECONDS : 1))\"")};
}

// The script's last lines: run the launch, forwarding the checkpoint signal (sending it when the
// scheduler does not) and requeueing the job on kExitRequeue when the spec asks.
std::string run_launch(const PlanDraft& d, const BatchScriptAdapter& adapter) {
  const CheckpointSpec& checkpoint = d.spec.checkpoint;
  const std::string exit_status_file(records::kExitStatusFile);  // a fixed name: no quoting
  std::string text;
  if (checkpoint.enabled) {
    std::string requeue_line;
    if (const std::string requeue = adapter.requeue_command();
        checkpoint.requeue && !requeue.empty()) {
      requeue_line = "if [[ $status -eq " + std::to_string(kExitRequeue) + " ]]; then\n" +
                     indented(requeue) + "  exit 0\nfi\n";
    }
    const auto [warning, timer] = checkpoint_warning(d, adapter.no_signal_before_walltime());
    text = render_template(d.templates("run_launch_checkpoint.sh.tmpl"),
                           {{"warning", warning},
                            {"signal", checkpoint.signal},
                            {"timer", timer},
                            {"requeue", requeue_line},
                            {"supervise", d.supervise},
                            {"note_lost_rank", d.note_lost_rank},
                            {"launch_status", d.launch_status},
                            {"exit_status_file", exit_status_file}});
  } else {
    text = render_template(d.templates("run_launch.sh.tmpl"),
                           {{"supervise", d.supervise},
                            {"note_lost_rank", d.note_lost_rank},
                            {"exit_status_file", exit_status_file}});
  }
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

void BatchScriptAdapter::check(PlanDraft& d) const {
  const std::string no_signal = no_signal_before_walltime();
  if (d.spec.checkpoint.enabled && !no_signal.empty() && !d.spec.walltime_seconds) {
    d.plan.warnings.push_back(
        "checkpoint.grace: " + no_signal + ", and the spec sets no walltime to count from; no SIG" +
        d.spec.checkpoint.signal +
        " comes before the end (set walltime to have the job script send it)");
  }
}

std::string qsub_continuation(const std::string& depend, const std::string& env_flag) {
  return "# Submit this script again, to start once this job has ended, in the same run directory\n"
         "# (the continuation's DTRAIN_JOB_ID is this job's); it resumes from the checkpoints "
         "there.\n"
         "qsub " +
         depend + " " + env_flag +
         " DTRAIN_REQUEUED_JOB_ID=\"$DTRAIN_JOB_ID\" \"$DTRAIN_RUN_DIR\"/" +
         std::string(records::kScriptFile);
}

void BatchScriptAdapter::frame(PlanDraft& d) const {
  // A batch job's id is known only inside the job, so the script names its run directory from it.
  d.plan.run_dir = d.spec.run_dir.empty()
                       ? default_run_dir(d.inputs.workdir, d.spec.name, "<job id>")
                       : d.inputs.run_dir;
}

std::vector<std::string> BatchScriptAdapter::ignored_fields(const JobSpec& spec) const {
  return kubernetes_only_fields(spec);
}

std::string BatchScriptAdapter::ignoring(const SiteProfile& site) const {
  return "site " + site.name + " runs no containers";
}

void BatchScriptAdapter::write(PlanDraft& d) const {
  const std::string run_dir =
      d.spec.run_dir.empty()
          ? shell_quote(default_run_dir(d.inputs.workdir, d.spec.name, "")) + "\"${DTRAIN_JOB_ID}\""
          : shell_quote(d.inputs.run_dir);
  TemplateValues values = {
      {"directives", join(directives(d.spec, d.site, d.shape), "\n")},
      {"version", d.inputs.version},
      {"name", d.spec.name},
      {"nodes", std::to_string(d.shape.nodes)},
      {"ranks_per_node", std::to_string(d.shape.ranks_per_node)},
      {"site", d.site.name},
      {"workdir", shell_quote(d.inputs.workdir)},
      {"run_dir", run_dir},
      {"env_exports", d.exports},
      {"setup", d.setup},
      {"bind_command", shell_join(d.bind)},
      {"rank_command", shell_join(d.run_rank)},
      {"run_launch", run_launch(d, *this)},
  };
  if (output_from_script()) {
    // NAME-ID.out, as Slurm's --output names it; a requeued job's continuation appends to it.
    values["output"] = "\"$DTRAIN_RUN_DIR\"/" +
                       shell_quote(records::batch_output_prefix(d.spec.name)) +
                       "\"$DTRAIN_JOB_ID\"" + std::string(records::kBatchOutputExtension);
  }
  add_launcher(d, values);
  d.plan.script = render_template(d.templates(template_name()), values);
}

bool BatchScriptAdapter::forgot_job(std::string_view text, int) const {
  return text.find("Invalid job id") != std::string_view::npos ||
         text.find("Unknown Job") != std::string_view::npos;
}

std::string slurm_time(long s) {
  const long days = s / 86400;
  const std::string hms = hh_mm_ss(s % 86400);
  return days > 0 ? std::to_string(days) + "-" + hms : hms;
}

std::string hh_mm_ss(long s) {
  return two_digits(s / 3600) + ":" + two_digits(s / 60 % 60) + ":" + two_digits(s % 60);
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

const std::vector<std::string>& filesystems_or_default(const JobSpec& spec,
                                                       const SiteProfile& site) {
  return spec.filesystems.empty() ? site.default_filesystems : spec.filesystems;
}

std::vector<std::string> prefixed(std::vector<std::string> lines, const std::string& prefix) {
  for (auto& line : lines) line = prefix + line;
  return lines;
}

std::string mpirun_launcher(const PlanDraft& d, const std::string& hostfile) {
  const JobShape& s = d.shape;
  std::string text = shell_join({"mpirun", "-np", std::to_string(s.nodes * s.ranks_per_node),
                                 "-npernode", std::to_string(s.ranks_per_node)}) +
                     " " + hostfile;
  std::vector<std::string> forwarded = {"PATH", "LD_LIBRARY_PATH", "DTRAIN_JOB_ID",
                                        "DTRAIN_RUN_DIR", "DTRAIN_HOSTS"};
  if (d.spec.checkpoint.enabled) forwarded.push_back("DTRAIN_PREEMPT_SIGNALS");
  if (!d.supervise.empty()) forwarded.push_back("DTRAIN_ATTEMPT");
  for (const auto& kv : d.plan.env) forwarded.push_back(kv.first);
  for (const auto& name : forwarded) text += " -x " + shell_quote(name);
  return text;
}

std::optional<int> env_node_count(const launch::Environment& env, std::string_view name) {
  const auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  const auto value = to_int(it->second);
  if (!value || *value < 1) {
    throw InputError("dtrain: " + std::string(name) + "=" + it->second +
                     ": expected the allocation's node count, a whole number from 1");
  }
  return *value;
}

std::string pbs_node_file(const launch::Environment& env) {
  const auto it = env.find("PBS_NODEFILE");
  return it == env.end() ? std::string() : it->second;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string parse_job_id_line(std::string_view output, std::string_view (*strip)(std::string_view),
                              const std::string& example) {
  std::string_view text = trim(output);
  if (auto nl = text.rfind('\n'); nl != std::string_view::npos) text = trim(text.substr(nl + 1));
  const std::string_view id = strip(text);
  const std::string_view number = id.substr(0, id.find('.'));
  if (!all_digits(number) || id.find_first_of(" \t") != std::string_view::npos) {
    throw SubmitError("expected a job id such as " + example + " in the output, got " +
                      quoted(output));
  }
  return std::string(id);
}

Argv QsubAdapter::submit_held_command(const std::string& script) const {
  return {"qsub", "-h", script};
}

std::string QsubAdapter::parse_submitted(std::string_view output) const {
  return parse_job_id_line(
      output, [](std::string_view id) { return id; }, "\"123\" or \"123.server\"");
}

Argv QsubAdapter::release_command(const std::string& job_id) const { return {"qrls", job_id}; }

Argv QsubAdapter::cancel_command(const std::string& job_id) const { return {"qdel", job_id}; }

void add_pbs_tail_directives(const JobSpec& spec, const JobShape& shape,
                             std::vector<std::string>& d) {
  if (!shape.queue.empty()) d.push_back("-q " + shape.queue);
  if (!spec.account.empty()) d.push_back("-A " + spec.account);
  d.push_back("-j oe");
  if (spec.checkpoint.enabled && spec.checkpoint.requeue) d.push_back("-r y");
  for (const auto& extra : spec.directives) d.push_back(extra);
}

}  // namespace dtrain::plan
