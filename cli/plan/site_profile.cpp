#include "plan/site_profile.hpp"

#include <algorithm>
#include <regex>
#include <set>
#include <utility>

#include "plan/schedulers/scheduler.hpp"
#include "plan/yaml_fields.hpp"

namespace dtrain::plan {
namespace {

using detail::Collector;
using detail::describe;
using detail::Field;
using detail::Reader;

// Which launchers the scheduler's template knows how to drive (its adapter says).
bool launcher_fits(const SiteProfile& site, const std::string& launcher) {
  const auto fits = scheduler_of(site).launchers();
  return std::find(fits.begin(), fits.end(), launcher) != fits.end();
}

void read_scheduler(Reader& read, const YAML::Node& v, const std::string& key, SiteProfile& p) {
  std::string name;
  read.choice(v, key, scheduler_names(), name);
  if (scheduler_adapter(name) != nullptr) p.scheduler = name;
}

// PBS resources: `select` (extra resources of each chunk) and `place`.
void read_resources(Reader& read, const YAML::Node& v, const std::string& key, std::string& out) {
  static const std::regex kResources("[A-Za-z0-9_.=:-]{1,128}");
  if (read.string(v, key, out) && !std::regex_match(out, kResources)) {
    read.errors.add(v, key, "expected PBS resources such as system=polaris, got " + describe(v));
  }
}

void read_required(Reader& read, const YAML::Node& v, const std::string& key, SiteProfile& p) {
  read.string_list(v, key, p.required, [](const std::string& field) {
    const auto& fields = job_spec_fields();
    return std::find(fields.begin(), fields.end(), field) != fields.end()
               ? std::string()
               : std::string("expected a job spec field name");
  });
}

void read_default_queue(Reader& read, const YAML::Node& v, const std::string& key, SiteProfile& p) {
  if (v.IsScalar()) {
    std::string queue;
    read.token(v, key, "a queue name", queue);
    if (!queue.empty()) p.default_queues = {queue};
    return;
  }
  if (!v.IsSequence()) {
    read.errors.add(v, key, "expected a queue name or a list of them, got " + describe(v));
    return;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string queue;
    read.token(v[i], key + "[" + std::to_string(i) + "]", "a queue name", queue);
    if (!queue.empty()) p.default_queues.push_back(queue);
  }
}

// Absolute directories without ':' (the separator of the variables they go into).
void read_directories(Reader& read, const YAML::Node& v, const std::string& key,
                      std::vector<std::string>& out) {
  read.string_list(v, key, out, [](const std::string& dir) {
    return !dir.empty() && dir.front() == '/' && dir.find(':') == std::string::npos
               ? std::string()
               : std::string("expected an absolute directory without ':'");
  });
}

const std::vector<Field<QueueRule>>& queue_rule_fields() {
  using Q = QueueRule;
  using N = const YAML::Node;
  using K = const std::string;
  static const std::vector<Field<Q>> rows = {
      {"queue", [](Reader& r, N& v, K& k, Q& q) { r.token(v, k, "a queue name", q.queue); }},
      {"min_nodes",
       [](Reader& r, N& v, K& k, Q& q) { r.integer(v, k, 1, kMaxNodes, q.min_nodes); }},
      {"max_nodes",
       [](Reader& r, N& v, K& k, Q& q) { r.integer(v, k, 1, kMaxNodes, q.max_nodes); }},
      {"min_walltime", [](Reader& r, N& v, K& k, Q& q) { r.walltime(v, k, q.min_walltime); }},
      {"max_walltime", [](Reader& r, N& v, K& k, Q& q) { r.walltime(v, k, q.max_walltime); }},
      {"note", [](Reader& r, N& v, K& k, Q& q) { r.string(v, k, q.note); }},
  };
  return rows;
}

void read_queues(Reader& read, const YAML::Node& v, const std::string& key, SiteProfile& p) {
  if (!v.IsSequence()) {
    read.errors.add(v, key, "expected a list of queue limits, got " + describe(v));
    return;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string path = key + "[" + std::to_string(i) + "]";
    QueueRule rule;
    std::set<std::string> seen;
    read.table(v[i], path, queue_rule_fields(), rule, &seen);
    if (v[i].IsMap() && !seen.count("queue")) {
      read.errors.add(v[i], path + ".queue", "required field is missing");
      continue;
    }
    if (rule.max_nodes > 0 && rule.max_nodes < rule.min_nodes) {
      read.errors.add(v[i], path + ".max_nodes",
                      "expected at least min_nodes (" + std::to_string(rule.min_nodes) + "), got " +
                          std::to_string(rule.max_nodes));
      continue;
    }
    if (rule.max_walltime > 0 && rule.max_walltime < rule.min_walltime) {
      read.errors.add(v[i], path + ".max_walltime", "expected at least min_walltime");
      continue;
    }
    if (!rule.queue.empty()) p.queues.push_back(std::move(rule));
  }
}

// Every field of a site profile, in documentation order: adding a field is one row.
const std::vector<Field<SiteProfile>>& profile_fields() {
  using P = SiteProfile;
  using N = const YAML::Node;
  using K = const std::string;
  static const std::vector<Field<P>> rows = {
      {"name", [](Reader& r, N& v, K& k, P& p) { r.token(v, k, "a site name", p.name); }},
      {"description", [](Reader& r, N& v, K& k, P& p) { r.string(v, k, p.description); }},
      {"scheduler", read_scheduler},
      {"launcher",
       [](Reader& r, N& v, K& k, P& p) {
         r.choice(v, k, {"srun", "mpiexec", "mpirun"}, p.launcher);
       }},
      {"srun_mpi",
       [](Reader& r, N& v, K& k, P& p) {
         r.choice(v, k, {"pmix", "pmi2", "cray_shasta", "none"}, p.srun_mpi);
       }},
      {"constraint",
       [](Reader& r, N& v, K& k, P& p) { r.token(v, k, "a node feature", p.constraint); }},
      {"select", [](Reader& r, N& v, K& k, P& p) { read_resources(r, v, k, p.select); }},
      {"place", [](Reader& r, N& v, K& k, P& p) { read_resources(r, v, k, p.place); }},
      {"gpus_per_node",
       [](Reader& r, N& v, K& k, P& p) { r.integer(v, k, 0, 64, p.gpus_per_node); }},
      {"cores_per_node",
       [](Reader& r, N& v, K& k, P& p) { r.integer(v, k, 1, 4096, p.cores_per_node); }},
      {"threads_per_core",
       [](Reader& r, N& v, K& k, P& p) { r.integer(v, k, 1, 8, p.threads_per_core); }},
      {"required", read_required},
      {"default_queue", read_default_queue},
      {"queues", read_queues},
      {"default_filesystems",
       [](Reader& r, N& v, K& k, P& p) { r.filesystems(v, k, p.default_filesystems); }},
      // The spec's env reader, with its name checks: a profile's names reach the job script too.
      {"env", [](Reader& r, N& v, K& k, P& p) { r.env(v, k, p.env); }},
      {"library_path",
       [](Reader& r, N& v, K& k, P& p) { read_directories(r, v, k, p.library_path); }},
      {"module_paths",
       [](Reader& r, N& v, K& k, P& p) { read_directories(r, v, k, p.module_paths); }},
      {"topology", [](Reader& r, N& v, K& k, P& p) { r.string(v, k, p.topology); }},
  };
  return rows;
}

}  // namespace

const std::vector<std::string>& site_profile_fields() {
  static const std::vector<std::string> fields = detail::field_names(profile_fields());
  return fields;
}

SiteProfile parse_site_profile(std::string_view text, const std::string& source_name) {
  Collector errors(source_name);
  YAML::Node root = detail::load_yaml(text, kMaxProfileBytes, "a site profile", errors);
  detail::check_document(root, errors);
  if (!root.IsMap()) {
    errors.add(root, "", "expected a mapping of site profile fields, got " + describe(root));
    errors.raise();
  }
  SiteProfile p;
  Reader read{errors};
  std::set<std::string> seen;
  read.table(root, "", profile_fields(), p, &seen);
  for (const char* field : {"name", "scheduler", "launcher"}) {
    if (!seen.count(field)) errors.add_at(0, field, "required field is missing");
  }
  if (seen.count("launcher") && !p.launcher.empty() && !launcher_fits(p, p.launcher)) {
    errors.add(std::as_const(root)["launcher"], "launcher",
               "launcher " + p.launcher + " is not supported with scheduler " + p.scheduler);
  }
  if (!errors.empty()) errors.raise();
  return p;
}

}  // namespace dtrain::plan
