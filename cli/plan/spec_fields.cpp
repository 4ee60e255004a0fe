#include "plan/spec_fields.hpp"

#include "common/job_signals.hpp"
#include "common/run_settings.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <string>
#include <string_view>

namespace dtrain::plan {
namespace {

using detail::Collector;
using detail::describe;
using detail::Field;
using detail::one_of;
using detail::parse_int;
using detail::Reader;

// checkpoint.signal: any signal a job may be sent; every process on the way passes it on
// (common/job_signals.hpp).
const std::vector<std::string> kSignals = [] {
  std::vector<std::string> out;
  for (const JobSignal& s : kJobSignals) out.emplace_back(s.name);
  return out;
}();

bool looks_like_profile_path(const std::string& site) {
  auto ends_with = [&](std::string_view suffix) {
    return site.size() >= suffix.size() &&
           site.compare(site.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".yaml") || ends_with(".yml");
}

// Linux refuses to exec a program with an argument (or an environment string) of 32 pages or more
// (MAX_ARG_STRLEN, counting the NUL): the job would be accepted and then fail at launch.
constexpr std::size_t kMaxArgBytes = 128 * 1024 - 1;

bool fits_an_argument(Collector& errors, const YAML::Node& node, const std::string& field) {
  if (node.Scalar().size() <= kMaxArgBytes) return true;
  errors.add(node, field,
             "expected at most " + std::to_string(kMaxArgBytes) +
                 " bytes (Linux passes no longer argument to a program: MAX_ARG_STRLEN), got " +
                 std::to_string(node.Scalar().size()) + " bytes");
  return false;
}

void read_command(Reader& read, const YAML::Node& node, const std::string&, JobSpec& spec) {
  Collector& errors = read.errors;
  if (node.IsScalar()) {
    std::string line;
    if (!read.string(node, "command", line) || !fits_an_argument(errors, node, "command")) return;
    if (line.find_first_not_of(" \t") == std::string::npos) {
      errors.add(node, "command", "expected a command line, got an empty string");
      return;
    }
    spec.command = {line};
    spec.command_is_shell = true;
    return;
  }
  if (!node.IsSequence()) {
    errors.add(node, "command",
               "expected a list of words such as [\"./train\", \"--epochs\", \"3\"] or a command "
               "line string, got " +
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
    if (!fits_an_argument(errors, word, field)) continue;
    spec.command.push_back(word.Scalar());
  }
  if (!spec.command.empty() && spec.command.front().empty()) {
    errors.add(node[0], "command[0]", "expected the program to run, got an empty string");
  }
}

// The reference grammar of distribution/reference (what docker and containerd accept):
// [host[:port]/]path[:tag][@digest], path components in lower case.
bool is_image_reference(const std::string& image) {
  static const std::string kHostLabel = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";
  static const std::string kComponent = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
  static const std::regex kReference(
      "(?:" + kHostLabel + "(?:\\." + kHostLabel + ")*(?::[0-9]+)?/)?" +  // host[:port]/
      kComponent + "(?:/" + kComponent + ")*" +                           // path
      "(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?" +                         // :tag
      "(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?");  // @digest
  // Bounded first: std::regex recurses per character.
  return image.size() <= 512 && std::regex_match(image, kReference);
}

void read_name(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  static const std::regex kJobName("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  if (read.string(value, key, spec.name) && !std::regex_match(spec.name, kJobName)) {
    read.errors.add(value, key,
                    "expected 1 to 64 letters, digits, '.', '_' or '-' (it names the run "
                    "directory and the scheduler job), got " +
                        describe(value));
  }
}

void read_site(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  const auto& sites = builtin_sites();
  if (read.string(value, key, spec.site) &&
      std::find(sites.begin(), sites.end(), spec.site) == sites.end() &&
      !looks_like_profile_path(spec.site)) {
    std::string message =
        "expected " + one_of(sites) + ", or a site profile file (.yaml), got " + describe(value);
    if (auto near = closest_match(spec.site, sites); !near.empty()) {
      message += " (did you mean \"" + near + "\"?)";
    }
    read.errors.add(value, key, message);
  }
}

void read_walltime(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  long seconds = 0;
  if (read.walltime(value, key, seconds)) spec.walltime_seconds = seconds;
}

void read_modules(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  static const std::regex kModule("[A-Za-z0-9][A-Za-z0-9._/@+:-]{0,127}");
  read.string_list(value, key, spec.modules, [](const std::string& v) {
    return std::regex_match(v, kModule)
               ? std::string()
               : std::string("expected a module name such as conda/2024-04-29");
  });
}

// The spec's messages list a field's default first ("one of: none, torch, ..."); the affinity
// library lists "none" last for the flags. The words stay the library's.
std::vector<std::string_view> framework_words() {
  std::vector<std::string_view> words = {launch::to_string(launch::Framework::kNone)};
  for (auto word : launch::framework_names()) {
    if (word != words.front()) words.push_back(word);
  }
  return words;
}

void read_framework(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  static const std::vector<std::string_view> words = framework_words();
  read.word(value, key, words, launch::parse_framework, spec.framework);
}

// The `affinity:` block: the words and their parsers are the affinity library's (policy.cpp).
const std::vector<Field<affinity::Policy>>& affinity_fields() {
  using P = affinity::Policy;
  static const std::vector<Field<P>> rows = {
      {"gpu",
       [](Reader& r, const YAML::Node& v, const std::string& path, P& p) {
         r.word(v, path, affinity::gpu_policy_names(), affinity::parse_gpu_policy, p.gpu);
       }},
      {"gpu_visibility",
       [](Reader& r, const YAML::Node& v, const std::string& path, P& p) {
         r.word(v, path, affinity::gpu_visibility_names(), affinity::parse_gpu_visibility,
                p.gpu_visibility);
       }},
      {"cpu",
       [](Reader& r, const YAML::Node& v, const std::string& path, P& p) {
         r.word(v, path, affinity::cpu_policy_names(), affinity::parse_cpu_policy, p.cpu);
       }},
      {"nic",
       [](Reader& r, const YAML::Node& v, const std::string& path, P& p) {
         r.word(v, path, affinity::nic_policy_names(), affinity::parse_nic_policy, p.nic);
       }},
  };
  return rows;
}

void read_signal(Reader& read, const YAML::Node& v, const std::string& path, CheckpointSpec& c) {
  std::string name = v.IsScalar() ? v.Scalar() : std::string();
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  if (std::find(kSignals.begin(), kSignals.end(), name) == kSignals.end()) {
    read.errors.add(v, path, "expected " + one_of(kSignals) + ", got " + describe(v));
    return;
  }
  c.signal = name;
}

const std::vector<Field<CheckpointSpec>>& checkpoint_fields() {
  using C = CheckpointSpec;
  static const std::vector<Field<C>> rows = {
      {"signal", read_signal},
      {"grace", [](Reader& r, const YAML::Node& v, const std::string& path,
                   C& c) { r.integer(v, path, 10, 86400, c.grace_seconds); }},
      {"requeue", [](Reader& r, const YAML::Node& v, const std::string& path,
                     C& c) { r.boolean(v, path, c.requeue); }},
  };
  return rows;
}

void read_checkpoint(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  spec.checkpoint.enabled = true;
  if (value.IsNull()) return;  // "checkpoint:" alone turns the defaults on
  read.table(value, key, checkpoint_fields(), spec.checkpoint);
}

void read_run_dir(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  if (!read.string(value, key, spec.run_dir)) return;
  if (spec.run_dir.empty()) {
    read.errors.add(value, key, "expected a directory path, got an empty string");
    return;
  }
  // NAME_MAX: no Linux file system takes a longer name, so mkdir would fail at submit (or, on a
  // batch site, inside the job).
  constexpr std::size_t kMaxComponent = 255;
  for (std::size_t start = 0; start <= spec.run_dir.size();) {
    const std::size_t slash = std::min(spec.run_dir.find('/', start), spec.run_dir.size());
    if (slash - start > kMaxComponent) {
      read.errors.add(value, key,
                      "expected path components of at most " + std::to_string(kMaxComponent) +
                          " bytes (NAME_MAX), got one of " + std::to_string(slash - start) +
                          " bytes starting " + detail::quote_short(spec.run_dir.substr(start, 20)));
      return;
    }
    start = slash + 1;
  }
}

void read_directives(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  read.string_list(value, key, spec.directives, [](const std::string& v) {
    return !v.empty() && v.front() == '-'
               ? std::string()
               : std::string(
                     "expected a scheduler option starting with '-' such as \"--exclusive\" or "
                     "\"-l place=scatter\"");
  });
}

void read_image(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  if (read.string(value, key, spec.image) && !is_image_reference(spec.image)) {
    read.errors.add(value, key,
                    "expected a container image reference such as "
                    "nvcr.io/nvidia/pytorch:24.05-py3 or ghcr.io/me/train@sha256:<digest>, got " +
                        describe(value));
  }
}

void read_namespace(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  static const std::regex kNamespace("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  if (read.string(value, key, spec.k8s_namespace) &&
      !std::regex_match(spec.k8s_namespace, kNamespace)) {
    read.errors.add(value, key,
                    "expected a Kubernetes namespace (1 to 63 lower-case letters, digits and '-', "
                    "starting and ending with a letter or digit), got " +
                        describe(value));
  }
}

// `nodes: 4` or the elastic range `nodes: MIN..MAX` (docs/fault-tolerance.md): the job asks for
// MAX nodes and carries on while at least MIN of them are up.
void read_nodes(Reader& read, const YAML::Node& value, const std::string& key, JobSpec& spec) {
  const std::string text = value.IsScalar() ? value.Scalar() : std::string();
  const std::size_t dots = text.find("..");
  if (dots == std::string::npos) {
    read.integer(value, key, 1, kMaxNodes, spec.nodes);
    return;
  }
  long long min = 0;
  long long max = 0;
  const std::string range_help =
      "expected a node count such as 4 or an elastic range MIN..MAX "
      "such as 2..4 (1 <= MIN <= MAX <= " +
      std::to_string(kMaxNodes) + "), got " + describe(value);
  if (!parse_int(std::string_view(text).substr(0, dots), min) ||
      !parse_int(std::string_view(text).substr(dots + 2), max) || min < 1 || max > kMaxNodes) {
    read.errors.add(value, key, range_help);
    return;
  }
  if (min > max) {
    read.errors.add(value, key,
                    "expected MIN <= MAX in the elastic range MIN..MAX, got " + describe(value) +
                        " (MIN " + std::to_string(min) + " > MAX " + std::to_string(max) + ")");
    return;
  }
  spec.nodes = static_cast<int>(max);
  spec.min_nodes = static_cast<int>(min);
}

// records:, hang_after:, on_hang: (common/run_settings.hpp): the parser and the words of what it
// expects are the ones each rank's environment is read with, so the spec and the variable it
// becomes accept the same values.
template <typename T>
void read_run_setting(Reader& read, const YAML::Node& value, const std::string& key,
                      std::optional<T> (*parse)(std::string_view), std::string_view expected,
                      std::optional<T>& out) {
  std::string text;
  if (!read.string(value, key, text)) return;
  if (const auto parsed = parse(text)) {
    out = *parsed;
    return;
  }
  read.errors.add(value, key, "expected " + std::string(expected) + ", got " + describe(value));
}

}  // namespace

namespace detail {

// Every field of a job spec, in documentation order (docs/spec.md): adding a field is one row.
const std::vector<Field<JobSpec>>& spec_fields() {
  using S = JobSpec;
  using N = const YAML::Node;
  using K = const std::string;
  static const std::vector<Field<S>> rows = {
      {"name", read_name},
      {"site", read_site},
      {"nodes", read_nodes},
      {"ranks_per_node",
       [](Reader& r, N& v, K& k, S& s) { r.integer(v, k, 1, kMaxRanksPerNode, s.ranks_per_node); }},
      {"gpus_per_rank",
       [](Reader& r, N& v, K& k, S& s) { r.integer(v, k, 0, 64, s.gpus_per_rank); }},
      {"cpus_per_rank",
       [](Reader& r, N& v, K& k, S& s) { r.integer(v, k, 1, 4096, s.cpus_per_rank); }},
      {"walltime", read_walltime},
      {"account",
       [](Reader& r, N& v, K& k, S& s) { r.token(v, k, "an account or project name", s.account); }},
      {"queue", [](Reader& r, N& v, K& k, S& s) { r.token(v, k, "a queue or QOS name", s.queue); }},
      {"partition",
       [](Reader& r, N& v, K& k, S& s) { r.token(v, k, "a partition name", s.partition); }},
      {"filesystems", [](Reader& r, N& v, K& k, S& s) { r.filesystems(v, k, s.filesystems); }},
      {"modules", read_modules},
      {"setup", [](Reader& r, N& v, K& k, S& s) { r.string_list(v, k, s.setup); }},
      {"env", [](Reader& r, N& v, K& k, S& s) { r.env(v, k, s.env); }},
      {"site_env", [](Reader& r, N& v, K& k, S& s) { r.boolean(v, k, s.site_env); }},
      {"framework", read_framework},
      {"affinity",
       [](Reader& r, N& v, K& k, S& s) { r.table(v, k, affinity_fields(), s.affinity); }},
      {"command", read_command},
      {"run_dir", read_run_dir},
      {"checkpoint", read_checkpoint},
      {"restarts",
       [](Reader& r, N& v, K& k, S& s) { r.integer(v, k, 0, kMaxRestarts, s.restarts); }},
      {"restart_backoff",
       [](Reader& r, N& v, K& k, S& s) {
         r.integer(v, k, 0, kMaxRestartBackoff, s.restart_backoff_seconds);
       }},
      {"records",
       [](Reader& r, N& v, K& k, S& s) {
         read_run_setting(r, v, k, parse_record_detail, kRecordDetailExpected, s.records);
       }},
      {"hang_after",
       [](Reader& r, N& v, K& k, S& s) {
         read_run_setting(r, v, k, parse_hang_after, kHangAfterExpected, s.hang_after);
       }},
      {"on_hang",
       [](Reader& r, N& v, K& k, S& s) {
         read_run_setting(r, v, k, parse_on_hang, kOnHangExpected, s.on_hang);
       }},
      {"directives", read_directives},
      {"image", read_image},
      {"namespace", read_namespace},
  };
  return rows;
}

}  // namespace detail
}  // namespace dtrain::plan
