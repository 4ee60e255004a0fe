#include "plan/command_spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <string_view>

namespace dtrain::plan {
namespace {

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Programs that run the next word: the job is named after what they run.
bool is_runner(std::string_view program) {
  static const std::regex kPython("python[0-9.]*|pypy[0-9.]*");
  static constexpr std::array<std::string_view, 6> kShells = {"bash", "sh",       "env",
                                                              "uv",   "torchrun", "nsys"};
  const std::string word(program);
  return std::regex_match(word, kPython) ||
         std::find(kShells.begin(), kShells.end(), program) != kShells.end();
}

std::string spec_name_characters(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-') {
      out += c;
    }
  }
  if (out.size() > 64) out.resize(64);
  return out;
}

}  // namespace

std::string command_job_name(const std::vector<std::string>& command) {
  if (command.empty()) return "job";
  std::string_view chosen = base_name(command[0]);
  if (is_runner(chosen)) {
    for (std::size_t i = 1; i < command.size(); ++i) {
      const std::string_view word = command[i];
      if (word == "-c") break;  // bash -c LINE: the runner's name
      if (word == "-m" && i + 1 < command.size()) {
        chosen = command[i + 1];
        break;
      }
      if (word.empty() || word[0] == '-' || word.find('=') != std::string_view::npos) continue;
      chosen = base_name(word);
      break;
    }
  }
  // train.py -> train; a module's dots stay (pkg.mod).
  if (chosen.size() > 3 && (chosen.ends_with(".py") || chosen.ends_with(".sh"))) {
    chosen.remove_suffix(3);
  }
  std::string name = spec_name_characters(chosen);
  return name.empty() ? "job" : name;
}

std::string command_spec_text(const CommandJob& job) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << command_job_name(job.command);
  if (job.nodes) out << YAML::Key << "nodes" << YAML::Value << *job.nodes;
  if (job.ranks_per_node) {
    out << YAML::Key << "ranks_per_node" << YAML::Value << *job.ranks_per_node;
  }
  if (job.restarts) out << YAML::Key << "restarts" << YAML::Value << *job.restarts;
  out << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& word : job.command) out << YAML::DoubleQuoted << word;
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

SpecOverrides command_spec_overrides(const CommandJob& job) {
  SpecOverrides overrides;
  if (!job.name.empty()) overrides.flags.push_back({"name", job.name, "--name"});
  if (!job.framework.empty())
    overrides.flags.push_back({"framework", job.framework, "--framework"});
  if (!job.records.empty()) overrides.flags.push_back({"records", job.records, "--records"});
  if (!job.hang_after.empty()) {
    overrides.flags.push_back({"hang_after", job.hang_after, "--hang-after"});
  }
  if (!job.on_hang.empty()) overrides.flags.push_back({"on_hang", job.on_hang, "--on-hang"});
  overrides.site = job.site;
  return overrides;
}

}  // namespace dtrain::plan
