#include "plan/yaml_fields.hpp"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>

#include "common/run_settings.hpp"
#include "plan/render.hpp"
#include "plan/yaml_expansion.hpp"

namespace dtrain::plan {
namespace {

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

bool is_dtrain_variable(std::string_view name) {
  // The job script exports the first three; `dtrain bind` and run-rank set the rest per rank.
  static constexpr std::array<std::string_view, 11> kOwned = {
      "DTRAIN_JOB_ID",     "DTRAIN_RUN_DIR",    "DTRAIN_HOSTS",      "DTRAIN_RANK",
      "DTRAIN_WORLD_SIZE", "DTRAIN_LOCAL_RANK", "DTRAIN_LOCAL_SIZE", "DTRAIN_CPUSET",
      "DTRAIN_GPUS",       "DTRAIN_NICS",       "DTRAIN_ATTEMPT"};
  return std::find(kOwned.begin(), kOwned.end(), name) != kOwned.end();
}

std::string_view bash_reserved_variable(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kReadOnly = {"BASHOPTS", "BASH_VERSINFO", "EUID",
                                                                "PPID",     "SHELLOPTS",     "UID"};
  static constexpr std::array<std::string_view, 17> kComputed = {
      "BASHPID",       "BASH_ARGC", "BASH_ARGV",     "BASH_COMMAND", "BASH_LINENO", "BASH_SOURCE",
      "BASH_SUBSHELL", "DIRSTACK",  "EPOCHREALTIME", "EPOCHSECONDS", "FUNCNAME",    "GROUPS",
      "HISTCMD",       "LINENO",    "RANDOM",        "SECONDS",      "SRANDOM"};
  if (std::find(kReadOnly.begin(), kReadOnly.end(), name) != kReadOnly.end()) {
    return "which bash keeps read-only (assigning it stops the job script)";
  }
  if (std::find(kComputed.begin(), kComputed.end(), name) != kComputed.end()) {
    return "whose value bash computes itself (an assignment never reaches the ranks)";
  }
  return "";
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

namespace detail {

bool Reader::walltime(const YAML::Node& node, const std::string& field, long& out) {
  const auto seconds = node.IsScalar() ? parse_walltime(node.Scalar()) : std::nullopt;
  if (!seconds) {
    errors.add(node, field,
               "expected a duration such as \"01:30:00\" (HH:MM:SS), \"1-00:00:00\" "
               "(D-HH:MM:SS) or 90 (minutes), up to 366 days, got " +
                   describe(node));
    return false;
  }
  out = *seconds;
  return true;
}

void Reader::env(const YAML::Node& node, const std::string& field,
                 std::vector<std::pair<std::string, std::string>>& out) {
  if (!node.IsMap()) {
    errors.add(node, field, "expected a mapping of NAME: value, got " + describe(node));
    return;
  }
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    const std::string path = field + "." + key;
    if (!kv.first.IsScalar() || !is_shell_name(key)) {
      errors.add(kv.first, key.empty() || key.find('\n') != std::string::npos ? field : path,
                 "expected a variable name of letters, digits and '_' not starting with a digit, "
                 "got " +
                     describe(kv.first));
      continue;
    }
    if (is_dtrain_variable(key)) {
      errors.add(kv.first, path,
                 "expected a variable of your own, got " + describe(kv.first) +
                     ", which dtrain sets for every rank (docs/spec.md, \"What each rank gets\")");
      continue;
    }
    if (const auto why = bash_reserved_variable(key); !why.empty()) {
      errors.add(kv.first, path,
                 "expected a variable the job script can set, got " + describe(kv.first) + ", " +
                     std::string(why));
      continue;
    }
    if (!seen.insert(key).second) {
      errors.add(kv.first, path, "expected each variable once, got it twice");
      continue;
    }
    if (!kv.second.IsScalar()) {
      errors.add(kv.second, path,
                 "expected a string, number or boolean, got " + describe(kv.second));
      continue;
    }
    if (kv.second.Scalar().find('\0') != std::string::npos) {
      errors.add(kv.second, path, "expected a value without NUL bytes");
      continue;
    }
    // DTRAIN_RECORDS, DTRAIN_HANG_AFTER, DTRAIN_ON_HANG: a value every rank would refuse at its
    // start is refused here, before the job is queued (empty is their default, as in the ranks).
    if (const auto expected = run_setting_problem(key, kv.second.Scalar());
        !expected.empty() && !kv.second.Scalar().empty()) {
      errors.add(kv.second, path,
                 "expected " + std::string(expected) + ", got " + describe(kv.second));
      continue;
    }
    out.emplace_back(key, kv.second.Scalar());
  }
}

namespace {

// yaml-cpp resolves the shorthand `!!binary` to `tag:yaml.org,2002:binary`; messages show the
// tag as the user wrote it.
std::string tag_as_written(const std::string& tag) {
  static const std::string kCore = "tag:yaml.org,2002:";
  return tag.rfind(kCore, 0) == 0 ? "!!" + tag.substr(kCore.size()) : tag;
}

// `path` as the readers name fields: "affinity.gpu", "command[2]".
void check_node(const YAML::Node& node, const std::string& path, Collector& errors) {
  // "?" is a plain node's non-specific tag, "!" a quoted scalar's, "" a node made by --set.
  const std::string& tag = node.Tag();
  if (!tag.empty() && tag != "?" && tag != "!") {
    errors.add(node, path,
               "expected a value without a YAML tag, got the tag " +
                   escape_for_message(tag_as_written(tag)) +
                   " (dtrain reads every value as the text written)");
  }
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    if (const std::size_t at = invalid_utf8_at(text); at != std::string::npos) {
      errors.add(node, path,
                 "expected UTF-8 text, got " + quote_short(text) + " (byte " +
                     escape_for_message(text.substr(at, 1)) + " at offset " + std::to_string(at) +
                     " begins no UTF-8 character)");
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      check_node(node[i], path + "[" + std::to_string(i) + "]", errors);
    }
  } else if (node.IsMap()) {
    for (const auto& kv : node) {
      // A key that is no plain text is named by its mapping, as the readers name it.
      const bool plain_key =
          kv.first.IsScalar() && invalid_utf8_at(kv.first.Scalar()) == std::string::npos;
      check_node(kv.first, path, errors);
      const std::string child = !plain_key     ? path
                                : path.empty() ? kv.first.Scalar()
                                               : path + "." + kv.first.Scalar();
      const int key_line = kv.first.Mark().line + 1;
      if (kv.second.IsNull() && kv.second.Mark().line + 1 != key_line) {
        errors.empty_value_at(kv.second, key_line);
      }
      check_node(kv.second, child, errors);
    }
  }
}

}  // namespace

void check_document(const YAML::Node& root, Collector& errors) {
  check_node(root, "", errors);
  // Reported alone: the readers would add a second message about the same value.
  if (!errors.empty()) errors.raise();
}

YAML::Node load_yaml(std::string_view text, std::size_t max_bytes, const std::string& what,
                     Collector& errors) {
  if (text.size() > max_bytes) {
    errors.add_at(0, "",
                  "expected " + what + " of at most " + std::to_string(max_bytes) + " bytes, got " +
                      std::to_string(text.size()) + " bytes");
    errors.raise();
  }
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    errors.add_at(
        0, "",
        "expected YAML text, got binary data (a NUL byte at offset " + std::to_string(nul) + ")");
    errors.raise();
  }
  // Job specs nest two or three levels; refuse deep flow nesting up front with a plain message
  // (yaml-cpp's own depth guard reports it only as "bad file").
  constexpr int kMaxDepth = 64;
  int depth = 0;
  int line = 1;
  for (char c : text) {
    if (c == '\n') ++line;
    if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        errors.add_at(line, "",
                      "expected at most " + std::to_string(kMaxDepth) +
                          " levels of nested [ ] or { }, got more");
        errors.raise();
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  if (const auto problem = check_yaml_shape(text)) {
    errors.add_at(problem->line, "", problem->what);
    errors.raise();
  }
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    // Deep block nesting (indentation, "- - - -") reaches yaml-cpp's own guard, whose message is
    // only "bad file".
    errors.add_at(
        e.mark.is_null() ? 0 : e.mark.line + 1, "",
        "expected " + what +
            " nested a few levels deep, got nesting deeper than the YAML parser's limit of " +
            std::to_string(e.depth()) + " levels");
    errors.raise();
  } catch (const YAML::Exception& e) {
    errors.add_at(e.mark.is_null() ? 0 : e.mark.line + 1, "", "invalid YAML: " + e.msg);
    errors.raise();
  }
}

}  // namespace detail
}  // namespace dtrain::plan
