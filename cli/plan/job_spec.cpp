#include "plan/job_spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <regex>
#include <set>
#include <utility>

#include "plan/errors.hpp"

namespace dtrain::plan {
namespace {

const std::vector<std::string> kSites = {"local"};

class Collector {
 public:
  explicit Collector(const std::string& source) : source_(source) {}

  void add(const YAML::Node& node, const std::string& field, std::string message) {
    int line = 0;
    if (node.IsDefined()) line = node.Mark().line + 1;
    issues_.push_back({source_, line, field, std::move(message)});
  }
  void add_at(int line, const std::string& field, std::string message) {
    issues_.push_back({source_, line, field, std::move(message)});
  }
  bool empty() const { return issues_.empty(); }
  [[noreturn]] void raise() { throw SpecError(std::move(issues_)); }

 private:
  std::string source_;
  std::vector<SpecIssue> issues_;
};

std::string quote_short(const std::string& s) {
  std::string shown = s.size() > 40 ? s.substr(0, 37) + "..." : s;
  std::string out = "\"";
  for (char c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[(static_cast<unsigned char>(c) >> 4) & 0xf];
      out += hex[static_cast<unsigned char>(c) & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return quote_short(node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "an undefined value";
  }
}

bool parse_int(const std::string& text, long long& out) {
  std::string_view v = text;
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  const char* end = v.data() + v.size();
  auto [ptr, ec] = std::from_chars(v.data(), end, out);
  return !v.empty() && ec == std::errc() && ptr == end;
}

void read_string(const YAML::Node& node, const std::string& field, Collector& errors,
                 std::string& out) {
  if (!node.IsScalar()) {
    errors.add(node, field, "expected a string, got " + describe(node));
    return;
  }
  out = node.Scalar();
}

void read_int(const YAML::Node& node, const std::string& field, long long min, long long max,
              Collector& errors, int& out) {
  const std::string expected =
      "expected an integer from " + std::to_string(min) + " to " + std::to_string(max);
  long long value = 0;
  if (!node.IsScalar() || !parse_int(node.Scalar(), value) || value < min || value > max) {
    errors.add(node, field, expected + ", got " + describe(node));
    return;
  }
  out = static_cast<int>(value);
}

void read_command(const YAML::Node& node, Collector& errors, std::vector<std::string>& out) {
  if (!node.IsSequence()) {
    errors.add(node, "command",
               "expected a list of words such as [\"./train\", \"--epochs\", \"3\"], got " +
                   describe(node));
    return;
  }
  if (node.size() == 0) {
    errors.add(node, "command", "expected at least one word, got an empty list");
    return;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& word = node[i];
    const std::string field = "command[" + std::to_string(i) + "]";
    if (!word.IsScalar()) {
      errors.add(word, field, "expected a string, got " + describe(word));
      continue;
    }
    if (word.Scalar().find('\0') != std::string::npos) {
      errors.add(word, field, "expected a string without NUL bytes");
      continue;
    }
    out.push_back(word.Scalar());
  }
  if (!out.empty() && out.front().empty()) {
    errors.add(node[0], "command[0]", "expected the program to run, got an empty string");
  }
}

void read_env(const YAML::Node& node, Collector& errors,
              std::vector<std::pair<std::string, std::string>>& out) {
  if (!node.IsMap()) {
    errors.add(node, "env", "expected a mapping of NAME: value, got " + describe(node));
    return;
  }
  static const std::regex kName("[A-Za-z_][A-Za-z0-9_]*");
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    const std::string field = "env." + key;
    if (!kv.first.IsScalar() || !std::regex_match(key, kName)) {
      errors.add(kv.first, field.size() > 4 ? field : "env",
                 "expected a variable name of letters, digits and '_' not starting with a digit, "
                 "got " +
                     describe(kv.first));
      continue;
    }
    if (!seen.insert(key).second) {
      errors.add(kv.first, field, "expected each variable once, got it twice");
      continue;
    }
    if (!kv.second.IsScalar()) {
      errors.add(kv.second, field,
                 "expected a string, number or boolean, got " + describe(kv.second));
      continue;
    }
    out.emplace_back(key, kv.second.Scalar());
  }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::vector<std::string>& job_spec_fields() {
  static const std::vector<std::string> fields = {"name",    "site", "nodes",  "ranks_per_node",
                                                  "command", "env",  "run_dir"};
  return fields;
}

std::string closest_match(std::string_view given, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(given, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  const std::size_t allowed = std::max<std::size_t>(2, given.size() / 3);
  return best_distance <= allowed ? best : std::string();
}

JobSpec parse_job_spec(std::string_view text, const std::string& source_name) {
  Collector errors(source_name);
  if (text.size() > kMaxSpecBytes) {
    errors.add_at(0, "",
                  "expected a job spec of at most " + std::to_string(kMaxSpecBytes) +
                      " bytes, got " + std::to_string(text.size()) + " bytes");
    errors.raise();
  }
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    errors.add_at(
        0, "",
        "expected YAML text, got binary data (a NUL byte at offset " + std::to_string(nul) + ")");
    errors.raise();
  }

  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // yaml-cpp guards its recursion depth (DeepRecursion), so deeply nested input lands here too.
    errors.add_at(e.mark.is_null() ? 0 : e.mark.line + 1, "", "invalid YAML: " + e.msg);
    errors.raise();
  }
  if (!root.IsMap()) {
    errors.add(root, "",
               "expected a mapping of job fields (name, command, ...), got " +
                   (root.IsNull() ? std::string("an empty document") : describe(root)));
    errors.raise();
  }

  JobSpec spec;
  std::set<std::string> seen;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      errors.add(kv.first, "", "expected a field name, got " + describe(kv.first));
      continue;
    }
    const std::string key = kv.first.Scalar();
    const YAML::Node& value = kv.second;
    if (!seen.insert(key).second) {
      errors.add(kv.first, key, "expected each field once, got it twice");
      continue;
    }
    if (key == "name") {
      read_string(value, key, errors, spec.name);
      static const std::regex kJobName("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
      if (value.IsScalar() && !std::regex_match(spec.name, kJobName)) {
        errors.add(value, key,
                   "expected 1 to 64 letters, digits, '.', '_' or '-' (it names the run "
                   "directory and the scheduler job), got " +
                       describe(value));
      }
    } else if (key == "site") {
      read_string(value, key, errors, spec.site);
      if (value.IsScalar() && std::find(kSites.begin(), kSites.end(), spec.site) == kSites.end()) {
        errors.add(value, key, "expected one of: local, got " + describe(value));
      }
    } else if (key == "nodes") {
      read_int(value, key, 1, kMaxNodes, errors, spec.nodes);
    } else if (key == "ranks_per_node") {
      read_int(value, key, 1, kMaxRanksPerNode, errors, spec.ranks_per_node);
    } else if (key == "command") {
      read_command(value, errors, spec.command);
    } else if (key == "env") {
      read_env(value, errors, spec.env);
    } else if (key == "run_dir") {
      read_string(value, key, errors, spec.run_dir);
      if (value.IsScalar() && spec.run_dir.empty()) {
        errors.add(value, key, "expected a directory path, got an empty string");
      }
    } else {
      std::string message = "unknown field; expected one of: ";
      for (std::size_t i = 0; i < job_spec_fields().size(); ++i) {
        message += (i ? ", " : "") + job_spec_fields()[i];
      }
      if (auto near = closest_match(key, job_spec_fields()); !near.empty()) {
        message = "unknown field; did you mean \"" + near + "\"?";
      }
      errors.add(kv.first, key, message);
    }
  }
  if (!seen.count("name")) errors.add_at(0, "name", "required field is missing");
  if (!seen.count("command")) errors.add_at(0, "command", "required field is missing");
  if (spec.site == "local" && spec.nodes != 1 && seen.count("nodes")) {
    const YAML::Node nodes_node = std::as_const(root)["nodes"];
    errors.add(
        nodes_node, "nodes",
        "expected 1 for site local (it runs on this machine), got " + std::to_string(spec.nodes));
  }
  if (!errors.empty()) errors.raise();
  return spec;
}

}  // namespace dtrain::plan
