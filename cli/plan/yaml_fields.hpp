// Shared by the YAML readers of cli/plan (job specs, site profiles): collecting every problem of
// a file with its line and field path, and messages that say what was expected and what was got.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/words.hpp"
#include "plan/errors.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::plan::detail {

class Collector {
 public:
  explicit Collector(const std::string& source) : source_(source) {}

  void add(const YAML::Node& node, const std::string& field, std::string message) {
    int line = 0;
    if (node.IsDefined()) line = node.Mark().line + 1;
    if (node.IsDefined() && node.IsNull()) {
      for (const auto& [value, key_line] : empty_values_) {
        if (value.is(node)) line = key_line;
      }
    }
    add_at(line, field, std::move(message));
  }
  // yaml-cpp marks an empty value (`site:` with nothing after it) where the next token starts, a
  // line or more below its key; check_document() notes the key's line here, and the messages about
  // the value name that line.
  void empty_value_at(const YAML::Node& value, int key_line) {
    empty_values_.emplace_back(value, key_line);
  }
  void add_at(int line, const std::string& field, std::string message) {
    if (const std::string* flag = given_by(field)) {
      issues_.push_back({*flag, 0, field, std::move(message)});
      return;
    }
    issues_.push_back({source_, line, field, std::move(message)});
  }
  // The value at `path` ("ranks_per_node", "affinity.gpu") and below it came from the command
  // line: its problems name `flag` ("--set ranks_per_node=lots"), not a line of the file. The
  // latest registration of a path wins, as the latest --set does.
  void given_on_command_line(std::string path, std::string flag) {
    flags_.emplace_back(std::move(path), std::move(flag));
  }
  bool empty() const { return issues_.empty(); }
  [[noreturn]] void raise() { throw SpecError(std::move(issues_)); }

 private:
  const std::string* given_by(const std::string& field) const {
    for (auto it = flags_.rbegin(); it != flags_.rend(); ++it) {
      const std::string& path = it->first;
      if (field.compare(0, path.size(), path) == 0 &&
          (field.size() == path.size() || field[path.size()] == '.' || field[path.size()] == '[')) {
        return &it->second;
      }
    }
    return nullptr;
  }

  std::string source_;
  std::vector<SpecIssue> issues_;
  std::vector<std::pair<std::string, std::string>> flags_;  // path, flag
  std::vector<std::pair<YAML::Node, int>> empty_values_;    // value, its key's line
};

inline std::string quote_short(const std::string& s) {
  return "\"" + escape_for_message(s.size() > 40 ? s.substr(0, 37) + "..." : s, "\"\\") + "\"";
}

inline std::string describe(const YAML::Node& node) {
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

// The spec readers' lists say "one of: a, b, c" (the bad-spec messages users and tests know).
template <typename Word>
std::string one_of(const std::vector<Word>& names) {
  return "one of: " + join_alternatives(names, ", ");
}

inline bool parse_int(std::string_view v, long long& out) {
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  const char* end = v.data() + v.size();
  auto [ptr, ec] = std::from_chars(v.data(), end, out);
  return !v.empty() && ec == std::errc() && ptr == end;
}

struct Reader;

// One row of a reader table: a field and the function that reads its value into a T (`path` is
// the field's path for messages, "affinity.gpu"). A file's table is the one definition of its
// fields: it yields the field list, the did-you-mean candidates and the readers.
template <typename T>
struct Field {
  std::string_view name;
  void (*read)(Reader& read, const YAML::Node& value, const std::string& path, T& out);
};

template <typename T>
std::vector<std::string> field_names(const std::vector<Field<T>>& table) {
  std::vector<std::string> names;
  for (const auto& row : table) names.emplace_back(row.name);
  return names;
}

// Field readers: each checks one shape and records a precise message when it does not fit.
struct Reader {
  Collector& errors;

  bool string(const YAML::Node& node, const std::string& field, std::string& out) {
    if (!node.IsScalar()) {
      errors.add(node, field, "expected a string, got " + describe(node));
      return false;
    }
    if (node.Scalar().find('\0') != std::string::npos ||
        node.Scalar().find('\n') != std::string::npos) {
      errors.add(node, field, "expected one line of text, got " + describe(node));
      return false;
    }
    out = node.Scalar();
    return true;
  }

  void token(const YAML::Node& node, const std::string& field, const std::string& what,
             std::string& out) {
    static const std::regex kToken("[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}");
    std::string value;
    if (!string(node, field, value)) return;
    if (!std::regex_match(value, kToken)) {
      errors.add(node, field,
                 "expected " + what + " (letters, digits, '.', '_', '@', '+' or '-'), got " +
                     describe(node));
      return;
    }
    out = value;
  }

  void choice(const YAML::Node& node, const std::string& field,
              const std::vector<std::string>& choices, std::string& out) {
    std::string value;
    if (!string(node, field, value)) return;
    if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
      refuse_choice(node, field, choices, value);
      return;
    }
    out = value;
  }

  // A word of a list another library defines (an affinity policy, a framework), turned into its
  // value by that library's parser: the words and their meaning live there, the message with the
  // file, the line and a suggestion here. `words` in the order the message lists them.
  template <typename Value>
  void word(const YAML::Node& node, const std::string& field,
            const std::vector<std::string_view>& words,
            Value (*parse)(std::string_view text, std::string_view what), Value& out) {
    std::string value;
    if (!string(node, field, value)) return;
    try {
      out = parse(value, field);
    } catch (const InputError&) {
      refuse_choice(node, field, std::vector<std::string>(words.begin(), words.end()), value);
    }
  }

  void refuse_choice(const YAML::Node& node, const std::string& field,
                     const std::vector<std::string>& choices, const std::string& value) {
    std::string message = "expected " + one_of(choices) + ", got " + describe(node);
    if (auto near = closest_match(value, choices); !near.empty()) {
      message += " (did you mean \"" + near + "\"?)";
    }
    errors.add(node, field, message);
  }

  void integer(const YAML::Node& node, const std::string& field, long long min, long long max,
               long long& out) {
    long long value = 0;
    if (!node.IsScalar() || !parse_int(node.Scalar(), value) || value < min || value > max) {
      errors.add(node, field,
                 "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                     ", got " + describe(node));
      return;
    }
    out = value;
  }

  template <typename T>
  void integer(const YAML::Node& node, const std::string& field, long long min, long long max,
               T& out) {
    long long value = -1;
    integer(node, field, min, max, value);
    if (value >= min) out = static_cast<T>(value);
  }

  void boolean(const YAML::Node& node, const std::string& field, bool& out) {
    static const std::set<std::string> kTrue = {"true", "yes", "on"};
    static const std::set<std::string> kFalse = {"false", "no", "off"};
    if (node.IsScalar() && kTrue.count(node.Scalar())) {
      out = true;
    } else if (node.IsScalar() && kFalse.count(node.Scalar())) {
      out = false;
    } else {
      errors.add(node, field, "expected true or false, got " + describe(node));
    }
  }

  // A list of one-line strings; `check` may reject an element with a message.
  void string_list(const YAML::Node& node, const std::string& field, std::vector<std::string>& out,
                   const std::function<std::string(const std::string&)>& check = nullptr) {
    if (!node.IsSequence()) {
      errors.add(node, field, "expected a list of strings, got " + describe(node));
      return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string item_field = field + "[" + std::to_string(i) + "]";
      std::string value;
      if (!string(node[i], item_field, value)) continue;
      if (check) {
        if (std::string problem = check(value); !problem.empty()) {
          errors.add(node[i], item_field, problem + ", got " + describe(node[i]));
          continue;
        }
      }
      out.push_back(value);
    }
  }

  // A duration as the schedulers write it (parse_walltime): a spec's `walltime`, a site profile's
  // queue limits.
  bool walltime(const YAML::Node& node, const std::string& field, long& out);

  // Filesystem names: a spec's `filesystems` and a profile's `default_filesystems` become one
  // scheduler directive (PBS `-l filesystems=home:eagle`, Cobalt `--attrs filesystems=home,eagle`),
  // so only tokens pass: a space would start another option of the scheduler's.
  void filesystems(const YAML::Node& node, const std::string& field,
                   std::vector<std::string>& out) {
    static const std::regex kName("[A-Za-z0-9_.-]{1,64}");
    string_list(node, field, out, [](const std::string& v) {
      return std::regex_match(v, kName)
                 ? std::string()
                 : std::string(
                       "expected a filesystem name such as eagle (1 to 64 letters, digits, '_', "
                       "'-' or '.')");
    });
  }

  // `NAME: value` pairs exported to every rank: a spec's or a site profile's `env`. The names
  // reach job scripts as `export NAME=...` and mpirun's `-x NAME`, so only shell variable names
  // pass; dtrain's own variables are refused because the value dtrain sets would silently win
  // (or, for the run directory and job id on batch sites, the job would lose its exit status).
  void env(const YAML::Node& node, const std::string& field,
           std::vector<std::pair<std::string, std::string>>& out);

  // A mapping whose keys are checked against `fields` (unknown ones get a suggestion).
  void mapping(const YAML::Node& node, const std::string& field,
               const std::vector<std::string>& fields,
               const std::function<void(const std::string& key, const YAML::Node& value,
                                        const std::string& path)>& each) {
    if (!node.IsMap()) {
      errors.add(node, field,
                 "expected a mapping with " + one_of(fields) + ", got " + describe(node));
      return;
    }
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        errors.add(kv.first, field, "expected a field name, got " + describe(kv.first));
        continue;
      }
      const std::string key = kv.first.Scalar();
      const std::string path = field.empty() ? key : field + "." + key;
      if (!seen.insert(key).second) {
        errors.add(kv.first, path, "expected each field once, got it twice");
        continue;
      }
      if (std::find(fields.begin(), fields.end(), key) == fields.end()) {
        std::string message = "unknown field; expected " + one_of(fields);
        if (auto near = closest_match(key, fields); !near.empty()) {
          message = "unknown field; did you mean \"" + near + "\"?";
        }
        errors.add(kv.first, path, message);
        continue;
      }
      each(key, kv.second, path);
    }
  }

  // A mapping read through a table of fields; `seen`, when given, collects the keys present.
  template <typename T>
  void table(const YAML::Node& node, const std::string& field, const std::vector<Field<T>>& rows,
             T& out, std::set<std::string>* seen = nullptr) {
    mapping(node, field, field_names(rows),
            [&](const std::string& key, const YAML::Node& value, const std::string& path) {
              if (seen != nullptr) seen->insert(key);
              for (const auto& row : rows) {
                if (row.name == key) row.read(*this, value, path, out);
              }
            });
  }
};

// Parses YAML text after refusing oversized and binary input; throws SpecError on failure.
YAML::Node load_yaml(std::string_view text, std::size_t max_bytes, const std::string& what,
                     Collector& errors);

// What every reader relies on, checked once over the whole document, keys included, before any
// field is read; throws SpecError naming each node that fails:
// - text is UTF-8: the spec's strings go into plan.json and `plan --json`, and JSON holds only
//   UTF-8 (nlohmann's dump() would throw type_error.316 after the run directory was made);
// - no node carries an explicit YAML tag (`!!binary`, `!!str`, `!local`): the readers take every
//   value as the text written, so a tag would be silently ignored.
// It also notes each empty value's line (Collector::empty_value_at).
void check_document(const YAML::Node& root, Collector& errors);

}  // namespace dtrain::plan::detail
