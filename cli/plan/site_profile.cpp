#include "plan/site_profile.hpp"

#include <regex>
#include <set>

#include "plan/yaml_fields.hpp"

namespace dtrain::plan {
namespace {

using detail::Collector;
using detail::describe;
using detail::Reader;

const std::vector<std::string> kFields = {"name",
                                          "description",
                                          "scheduler",
                                          "launcher",
                                          "srun_mpi",
                                          "constraint",
                                          "select",
                                          "place",
                                          "gpus_per_node",
                                          "cores_per_node",
                                          "threads_per_core",
                                          "required",
                                          "default_queue",
                                          "default_filesystems",
                                          "env",
                                          "topology"};

const std::vector<std::string> kSchedulers = {"local",  "slurm", "pbspro",
                                              "cobalt", "pbs",   "kubernetes"};

// Which launchers each scheduler's template knows how to drive.
bool launcher_fits(Scheduler s, const std::string& launcher) {
  switch (s) {
    case Scheduler::kSlurm:
      return launcher == "srun" || launcher == "mpirun";
    case Scheduler::kPbsPro:
      return launcher == "mpiexec" || launcher == "mpirun";
    case Scheduler::kLocal:
    case Scheduler::kCobalt:
    case Scheduler::kPbs:
    case Scheduler::kKubernetes:  // the MPI operator's OpenMPI mode: mpirun over its hostfile
      return launcher == "mpirun";
  }
  return false;
}

}  // namespace

std::string_view scheduler_name(Scheduler s) {
  switch (s) {
    case Scheduler::kSlurm:
      return "slurm";
    case Scheduler::kPbsPro:
      return "pbspro";
    case Scheduler::kCobalt:
      return "cobalt";
    case Scheduler::kPbs:
      return "pbs";
    case Scheduler::kKubernetes:
      return "kubernetes";
    case Scheduler::kLocal:
      break;
  }
  return "local";
}

SiteProfile parse_site_profile(std::string_view text, const std::string& source_name) {
  Collector errors(source_name);
  YAML::Node root = detail::load_yaml(text, kMaxProfileBytes, "a site profile", errors);
  if (!root.IsMap()) {
    errors.add(root, "", "expected a mapping of site profile fields, got " + describe(root));
    errors.raise();
  }
  SiteProfile p;
  Reader read{errors};
  std::set<std::string> seen;
  const YAML::Node* launcher_node = nullptr;
  YAML::Node launcher_copy;
  read.mapping(
      root, "", kFields, [&](const std::string& key, const YAML::Node& v, const std::string&) {
        seen.insert(key);
        if (key == "name") read.token(v, key, "a site name", p.name);
        if (key == "description") read.string(v, key, p.description);
        if (key == "scheduler") {
          std::string name;
          read.choice(v, key, kSchedulers, name);
          for (Scheduler s : {Scheduler::kLocal, Scheduler::kSlurm, Scheduler::kPbsPro,
                              Scheduler::kCobalt, Scheduler::kPbs, Scheduler::kKubernetes}) {
            if (scheduler_name(s) == name) p.scheduler = s;
          }
        }
        if (key == "launcher") {
          read.choice(v, key, {"srun", "mpiexec", "mpirun"}, p.launcher);
          launcher_copy = v;
          launcher_node = &launcher_copy;
        }
        if (key == "srun_mpi")
          read.choice(v, key, {"pmix", "pmi2", "cray_shasta", "none"}, p.srun_mpi);
        if (key == "constraint") read.token(v, key, "a node feature", p.constraint);
        if (key == "select" || key == "place") {
          static const std::regex kResources("[A-Za-z0-9_.=:-]{1,128}");
          std::string& out = key == "select" ? p.select : p.place;
          if (read.string(v, key, out) && !std::regex_match(out, kResources)) {
            errors.add(v, key, "expected PBS resources such as system=polaris, got " + describe(v));
          }
        }
        if (key == "gpus_per_node") read.integer(v, key, 0, 64, p.gpus_per_node);
        if (key == "cores_per_node") read.integer(v, key, 1, 4096, p.cores_per_node);
        if (key == "threads_per_core") read.integer(v, key, 1, 8, p.threads_per_core);
        if (key == "required") {
          read.string_list(v, key, p.required, [](const std::string& field) {
            const auto& fields = job_spec_fields();
            return std::find(fields.begin(), fields.end(), field) != fields.end()
                       ? std::string()
                       : std::string("expected a job spec field name");
          });
        }
        if (key == "default_queue") read.token(v, key, "a queue name", p.default_queue);
        if (key == "default_filesystems") read.string_list(v, key, p.default_filesystems);
        if (key == "env") read.env(v, key, p.env);
        if (key == "topology") read.string(v, key, p.topology);
      });
  for (const char* field : {"name", "scheduler", "launcher"}) {
    if (!seen.count(field)) errors.add_at(0, field, "required field is missing");
  }
  if (launcher_node != nullptr && !p.launcher.empty() && !launcher_fits(p.scheduler, p.launcher)) {
    errors.add(*launcher_node, "launcher",
               "launcher " + p.launcher + " is not supported with scheduler " +
                   std::string(scheduler_name(p.scheduler)));
  }
  if (!errors.empty()) errors.raise();
  return p;
}

}  // namespace dtrain::plan
