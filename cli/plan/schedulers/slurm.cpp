#include "plan/scheduler_commands.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <sstream>

namespace dtrain::plan {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string quoted(std::string_view output) {
  std::string text(trim(output));
  if (text.size() > 400) text = text.substr(0, 400) + "...";
  return text.empty() ? "nothing" : "\"" + text + "\"";
}

// "Key=Value" words of `scontrol show job -o`; values never contain spaces except Command= and
// the like, which come after the fields read here.
std::optional<std::string> slurm_field(std::string_view line, std::string_view key) {
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t end = std::min(line.find_first_of(" \t\n", pos), line.size());
    const std::string_view word = line.substr(pos, end - pos);
    if (word.size() > key.size() && word.substr(0, key.size()) == key && word[key.size()] == '=') {
      return std::string(word.substr(key.size() + 1));
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::optional<JobStatus> parse_slurm(std::string_view output) {
  const auto state = slurm_field(output, "JobState");
  if (!state) return std::nullopt;
  JobStatus status;
  status.state = *state;
  // States a job leaves only by ending; REQUEUED and friends go back to PENDING.
  static constexpr std::array<std::string_view, 10> kDone = {
      "COMPLETED", "CANCELLED", "FAILED",   "TIMEOUT",       "NODE_FAIL",
      "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED"};
  status.finished = std::find(kDone.begin(), kDone.end(), status.state) != kDone.end();
  if (auto reason = slurm_field(output, "Reason"); reason && *reason != "None") {
    status.reason = *reason;
  }
  if (auto nodes = slurm_field(output, "NodeList"); nodes && *nodes != "(null)") {
    status.nodes = *nodes;
  }
  status.node_failed = status.state == "NODE_FAIL";
  if (auto code = slurm_field(output, "ExitCode"); code && status.finished) {
    const auto colon = code->find(':');
    const auto exit = to_int(std::string_view(*code).substr(0, colon));
    const auto signal = colon == std::string::npos
                            ? std::optional<int>(0)
                            : to_int(std::string_view(*code).substr(colon + 1));
    if (exit && signal) {
      int value = *signal > 0 ? 128 + *signal : *exit;
      // A job Slurm ended (cancelled, out of time) without a status of its own still failed.
      if (value == 0 && status.state != "COMPLETED") value = 1;
      status.exit_status = value;
    }
  }
  return status;
}

std::optional<JobStatus> parse_pbs(std::string_view output) {
  std::optional<JobStatus> status;
  std::istringstream in{std::string(output)};
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string_view key = trim(std::string_view(line).substr(0, eq));
    const std::string_view value = trim(std::string_view(line).substr(eq + 3));
    if (key == "job_state") {
      if (!status) status.emplace();
      status->state = std::string(value);
      // C: Torque's completed; F: PBS Pro's finished (qstat -x); X: a finished subjob.
      status->finished = value == "C" || value == "F" || value == "X";
    } else if (key == "Exit_status") {
      if (!status) status.emplace();
      if (auto v = to_int(value)) {
        // PBS Pro reports a job killed by signal N as 256 + N.
        status->exit_status = *v >= 256 ? 128 + (*v - 256) : *v;
      }
    } else if (key == "comment") {
      if (!status) status.emplace();
      status->reason = std::string(value);
    }
  }
  if (status && status->state.empty()) return std::nullopt;
  if (status && !status->finished) status->exit_status.reset();
  return status;
}

std::optional<JobStatus> parse_cobalt(std::string_view output) {
  // A table: "JobID  User  WallTime  Nodes  State  Location", a rule of '=', then one row.
  std::istringstream in{std::string(output)};
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    if (fields.empty() || fields[0].find_first_not_of('=') == std::string::npos) continue;
    if (header.empty()) {
      header = fields;
      continue;
    }
    const auto col = std::find(header.begin(), header.end(), "State");
    const auto index = static_cast<std::size_t>(col - header.begin());
    if (col == header.end() || index >= fields.size()) return std::nullopt;
    JobStatus status;
    status.state = fields[index];
    // Cobalt forgets a job as soon as it ends; "exiting" is the last state it shows.
    status.finished = status.state == "done" || status.state == "killing";
    return status;
  }
  return std::nullopt;
}

}  // namespace

Argv submit_held_command(Scheduler s, const std::string& script) {
  switch (s) {
    case Scheduler::kSlurm:
      return {"sbatch", "--hold", "--parsable", script};
    case Scheduler::kPbsPro:
    case Scheduler::kPbs:
    case Scheduler::kCobalt:
      return {"qsub", "-h", script};
    case Scheduler::kLocal:
    case Scheduler::kKubernetes:  // kubectl: plan/kubectl.hpp
      break;
  }
  throw std::logic_error("dtrain: submit_held_command for scheduler " +
                         std::string(scheduler_name(s)));
}

Argv release_command(Scheduler s, const std::string& job_id) {
  if (s == Scheduler::kSlurm) return {"scontrol", "release", job_id};
  return {"qrls", job_id};
}

Argv cancel_command(Scheduler s, const std::string& job_id) {
  if (s == Scheduler::kSlurm) return {"scancel", job_id};
  return {"qdel", job_id};
}

Argv status_command(Scheduler s, const std::string& job_id) {
  switch (s) {
    case Scheduler::kSlurm:
      return {"scontrol", "show", "job", "-o", job_id};
    case Scheduler::kPbsPro:
      return {"qstat", "-x", "-f", job_id};
    case Scheduler::kPbs:
      return {"qstat", "-f", job_id};
    case Scheduler::kCobalt:
      return {"qstat", job_id};
    case Scheduler::kLocal:
    case Scheduler::kKubernetes:  // kubectl: plan/kubectl.hpp
      break;
  }
  throw std::logic_error("dtrain: status_command for scheduler " + std::string(scheduler_name(s)));
}

std::string parse_submitted_job_id(Scheduler s, std::string_view output) {
  // The id is the last non-empty line: site wrappers sometimes print notices before it.
  std::string_view text = trim(output);
  if (auto nl = text.rfind('\n'); nl != std::string_view::npos) text = trim(text.substr(nl + 1));
  std::string_view id = text;
  if (s == Scheduler::kSlurm) id = text.substr(0, text.find(';'));  // "123;cluster"
  if (s == Scheduler::kSlurm) {
    // "Submitted batch job 123" when a wrapper dropped --parsable.
    if (auto sp = id.rfind(' '); sp != std::string_view::npos) id = id.substr(sp + 1);
  }
  const std::string_view number = id.substr(0, id.find('.'));
  if (!all_digits(number) || id.find_first_of(" \t") != std::string_view::npos) {
    throw SubmitError("expected a job id such as \"123\"" +
                      std::string(s == Scheduler::kSlurm ? "" : " or \"123.server\"") +
                      " in the output, got " + quoted(output));
  }
  return std::string(id);
}

std::string job_number(std::string_view job_id) {
  return std::string(job_id.substr(0, job_id.find('.')));
}

Argv failed_nodes_command(Scheduler s, const std::string& nodes) {
  if (s != Scheduler::kSlurm || nodes.empty()) return {};
  // One line per node that is down, failing or not answering: "node2|Not responding".
  return {"sinfo", "-h", "-N", "-n", nodes, "-t", "down,fail,no_respond,drain", "-o", "%N|%E"};
}

std::vector<std::string> parse_failed_nodes(Scheduler s, std::string_view output) {
  std::vector<std::string> out;
  if (s != Scheduler::kSlurm) return out;
  std::istringstream in{std::string(output)};
  for (std::string line; std::getline(in, line);) {
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    const auto bar = text.find('|');
    std::string entry(text.substr(0, bar));
    if (bar != std::string_view::npos) {
      const std::string_view why = trim(text.substr(bar + 1));
      if (!why.empty() && why != "none") entry += " (" + std::string(why) + ")";
    }
    // sinfo -N lists a node once per partition it is in.
    if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(std::move(entry));
  }
  return out;
}

std::optional<JobStatus> parse_job_status(Scheduler s, std::string_view output) {
  switch (s) {
    case Scheduler::kSlurm:
      return parse_slurm(output);
    case Scheduler::kPbsPro:
    case Scheduler::kPbs:
      return parse_pbs(output);
    case Scheduler::kCobalt:
      return parse_cobalt(output);
    case Scheduler::kLocal:
    case Scheduler::kKubernetes:  // kubectl: plan/kubectl.hpp
      break;
  }
  throw std::logic_error("dtrain: parse_job_status for scheduler " +
                         std::string(scheduler_name(s)));
}

}  // namespace dtrain::plan
