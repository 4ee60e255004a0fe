#include "plan/job_spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <utility>

#include "common/errors.hpp"
#include "plan/spec_fields.hpp"
#include "plan/yaml_expansion.hpp"
#include "plan/yaml_fields.hpp"

namespace dtrain::plan {
namespace {

using detail::Collector;
using detail::describe;
using detail::parse_int;
using detail::Reader;

// A run setting given by its field and under `env:` too would reach the ranks twice, the field's
// value last: refused, naming the variable where `env:` sets it.
void refuse_setting_twice(const JobSpec& spec, const YAML::Node& root, Collector& errors) {
  const struct {
    bool given;
    std::string_view field;
    std::string_view variable;
  } settings[] = {{spec.records.has_value(), "records", kRecordsVariable},
                  {spec.hang_after.has_value(), "hang_after", kHangAfterVariable},
                  {spec.on_hang.has_value(), "on_hang", kOnHangVariable}};
  const YAML::Node env = root["env"];
  if (!env.IsDefined() || !env.IsMap()) return;  // a missing key's node throws on IsMap()
  for (const auto& kv : env) {
    for (const auto& s : settings) {
      if (!s.given || !kv.first.IsScalar() || kv.first.Scalar() != s.variable) continue;
      errors.add(kv.first, "env." + kv.first.Scalar(),
                 "expected it unset when the spec has " + std::string(s.field) +
                     ": (which exports " + std::string(s.variable) + " itself), got " +
                     describe(kv.second));
    }
  }
}

}  // namespace

const std::vector<std::string>& builtin_sites() {
  static const std::vector<std::string> sites = {"local",    "slurm", "perlmutter", "polaris",
                                                 "thetagpu", "pbs",   "k8s"};
  return sites;
}

const std::vector<std::string>& job_spec_fields() {
  static const std::vector<std::string> fields = detail::field_names(detail::spec_fields());
  return fields;
}

std::optional<long> parse_walltime(std::string_view text) {
  long days = 0;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    long long d = 0;
    // 366 itself: "366-00:00:00" is how slurm_time() writes the longest walltime allowed.
    if (!parse_int(text.substr(0, dash), d) || d < 0 || d > 366) return std::nullopt;
    days = static_cast<long>(d);
    text.remove_prefix(dash + 1);
    if (text.find(':') == std::string_view::npos) text = std::string_view();  // "D-HH" unsupported
  }
  std::vector<long long> parts;
  while (true) {
    auto colon = text.find(':');
    long long v = 0;
    // Bounding each part keeps the arithmetic below far from overflow; no valid walltime has a
    // part this large (366 days is 527040 minutes).
    if (!parse_int(text.substr(0, colon), v) || v < 0 || v > 100'000'000) return std::nullopt;
    parts.push_back(v);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  long long seconds = 0;
  if (parts.size() == 1 && days == 0) {
    seconds = parts[0] * 60;  // plain minutes, as sbatch -t and Cobalt -t read them
  } else if (parts.size() == 2 && days == 0) {
    if (parts[1] > 59) return std::nullopt;
    seconds = parts[0] * 60 + parts[1];
  } else if (parts.size() == 3) {
    if (parts[1] > 59 || parts[2] > 59 || (days > 0 && parts[0] > 23)) return std::nullopt;
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  } else {
    return std::nullopt;
  }
  seconds += days * 86400LL;
  if (seconds <= 0 || seconds > 366LL * 86400) return std::nullopt;
  return static_cast<long>(seconds);
}

namespace {

// Splits a --set KEY into its dotted path (affinity.gpu -> affinity, gpu).
std::vector<std::string> key_path(const std::string& key) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    auto dot = key.find('.', start);
    parts.push_back(key.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

// Sets `value` at the dotted `key` of `root`, creating mappings on the way (affinity.gpu=...).
void set_at(YAML::Node& root, const std::vector<std::string>& parts, const YAML::Node& value) {
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node child = node[parts[i]];
    if (!child.IsMap()) {
      child = YAML::Node(YAML::NodeType::Map);
      node[parts[i]] = child;
    }
    node.reset(child);
  }
  node[parts.back()] = value;
}

// Applies the command line's fields to the parsed file, telling `errors` which paths they gave.
void apply_to_tree(YAML::Node& root, const SpecOverrides& overrides, Collector& errors) {
  for (const auto& override_text : overrides.set) {
    const std::string where = "--set " + override_text;
    auto eq = override_text.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError("dtrain: " + where + ": expected KEY=VALUE such as ranks_per_node=4");
    }
    const std::string key = override_text.substr(0, eq);
    YAML::Node value;
    if (const auto problem = check_yaml_shape(override_text.substr(eq + 1))) {
      throw UsageError("dtrain: " + where + ": " + problem->what);
    }
    try {
      value = YAML::Load(override_text.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      throw UsageError("dtrain: " + where + ": the value is not valid YAML: " + e.msg);
    }
    const std::vector<std::string> parts = key_path(key);
    if (std::find(job_spec_fields().begin(), job_spec_fields().end(), parts[0]) ==
        job_spec_fields().end()) {
      std::string message = "dtrain: " + where + ": unknown field \"" + parts[0] + "\"";
      if (auto near = closest_match(parts[0], job_spec_fields()); !near.empty()) {
        message += "; did you mean \"" + near + "\"?";
      }
      throw UsageError(message);
    }
    set_at(root, parts, value);
    errors.given_on_command_line(key, where);
  }
  for (const auto& field : overrides.flags) {
    set_at(root, {field.key}, YAML::Node(field.value));
    errors.given_on_command_line(field.key, field.flag + " " + field.value);
  }
  if (!overrides.site.empty()) {
    set_at(root, {"site"}, YAML::Node(overrides.site));  // a name or a path, never YAML
    errors.given_on_command_line("site", "--site " + overrides.site);
  }
}

}  // namespace

JobSpec parse_job_spec(std::string_view text, const std::string& source_name,
                       const SpecOverrides& overrides) {
  Collector errors(source_name);
  YAML::Node root = detail::load_yaml(text, kMaxSpecBytes, "a job spec", errors);
  if (!overrides.set.empty() || !overrides.site.empty() || !overrides.flags.empty()) {
    if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    if (root.IsMap()) apply_to_tree(root, overrides, errors);
  }
  detail::check_document(root, errors);
  if (!root.IsMap()) {
    errors.add(root, "",
               "expected a mapping of job fields (name, command, ...), got " +
                   (root.IsNull() ? std::string("an empty document") : describe(root)));
    errors.raise();
  }

  JobSpec spec;
  Reader read{errors};
  std::set<std::string> seen;
  read.table(root, "", detail::spec_fields(), spec, &seen);
  refuse_setting_twice(spec, std::as_const(root), errors);
  if (!seen.count("name")) errors.add_at(0, "name", "required field is missing");
  if (!seen.count("command")) errors.add_at(0, "command", "required field is missing");
  if (spec.min_nodes > 0 && spec.restarts < 1) {
    errors.add(
        std::as_const(root)["nodes"], "nodes",
        "the elastic range " + std::to_string(spec.min_nodes) + ".." + std::to_string(spec.nodes) +
            " needs restarts: 1 or more (a job carries on with fewer nodes by starting a new "
            "attempt), got restarts: " +
            std::to_string(spec.restarts));
  }
  // An elastic range on a site whose scheduler cannot shrink is refused by the planner, which
  // knows the scheduler of every site (a profile path's too).
  if (spec.site == "local" && spec.nodes != 1 && seen.count("nodes") && spec.min_nodes == 0) {
    const YAML::Node nodes_node = std::as_const(root)["nodes"];
    errors.add(
        nodes_node, "nodes",
        "expected 1 for site local (it runs on this machine), got " + std::to_string(spec.nodes));
  }
  if (spec.site == "k8s" && spec.restarts > 0) {
    errors.add(std::as_const(root)["restarts"], "restarts",
               "expected 0 for site k8s (the MPIJob's pods are restarted by Kubernetes, not by "
               "dtrain), got " +
                   std::to_string(spec.restarts));
  }
  if (!errors.empty()) errors.raise();
  return spec;
}

JobSpec parse_spec_fields(std::string_view text, const std::string& source_name,
                          const std::vector<std::string_view>& fields) {
  Collector errors(source_name);
  const YAML::Node root = detail::load_yaml(text, kMaxSpecBytes, "a job spec", errors);
  JobSpec spec;
  if (root.IsNull()) return spec;
  detail::check_document(root, errors);
  if (!root.IsMap()) {
    errors.add(root, "",
               "expected a mapping of job fields (name, command, ...), got " + describe(root));
    errors.raise();
  }
  Reader read{errors};
  for (const auto& row : detail::spec_fields()) {
    if (std::find(fields.begin(), fields.end(), row.name) == fields.end()) continue;
    const YAML::Node value = root[std::string(row.name)];
    if (value.IsDefined()) row.read(read, value, std::string(row.name), spec);
  }
  if (!errors.empty()) errors.raise();
  return spec;
}

std::string apply_overrides(std::string_view text, const std::string& source_name,
                            const SpecOverrides& overrides) {
  if (overrides.set.empty() && overrides.site.empty() && overrides.flags.empty()) {
    return std::string(text);
  }
  Collector errors(source_name);
  YAML::Node root = detail::load_yaml(text, kMaxSpecBytes, "a job spec", errors);
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) return std::string(text);  // parse_job_spec reports the shape problem
  apply_to_tree(root, overrides, errors);
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace dtrain::plan
