#include "task_plan.hpp"

#include "affinity/binding.hpp"
#include "affinity/errors.hpp"
#include "affinity/rank_env.hpp"
#include "launch/framework_env.hpp"
#include "launch/rank_place.hpp"

namespace dtrain::spank {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string report_line(const affinity::Node& node, const affinity::RankMap& map,
                        const TaskFacts& facts, const TaskBinding& b) {
  const auto& r = map.ranks[static_cast<std::size_t>(facts.local_rank)];
  auto get = [&](const char* name) {
    auto it = b.environment.find(std::string_view(name));
    return it == b.environment.end() ? std::string("-") : it->second;
  };
  std::vector<std::string> pci;
  for (int g : r.node_gpus) pci.push_back(node.gpus[static_cast<std::size_t>(g)].pci.to_string());
  std::string line = "dtrain: " + facts.hostname + " task " + std::to_string(facts.rank) +
                     " (local " + std::to_string(facts.local_rank) + " of " +
                     std::to_string(facts.local_size) +
                     "): CUDA_VISIBLE_DEVICES=" + get("CUDA_VISIBLE_DEVICES");
  if (!pci.empty()) line += " [" + join(pci, ",") + "]";
  line += " cpus=" + r.cpus.to_list() + " (numa " + std::to_string(r.numa) + ")";
  line += " nics=" + get("DTRAIN_NICS");
  line += b.bind                 ? " bound"
          : node.is_this_machine ? " not bound (--dtrain-cpu=none)"
                                 : " not bound (topology " + node.source + ")";
  return line;
}

// Where the task sits in the step, for the framework's rendezvous variables.
launch::JobPlacement placement(const TaskFacts& facts) {
  launch::JobPlacement p;
  p.rank = facts.rank;
  p.size = facts.size;
  p.local_rank = facts.local_rank;
  p.local_size = facts.local_size;
  p.node_rank = facts.node_rank;
  p.job_id = facts.job_id;
  p.hosts = facts.nodelist.empty() ? std::vector<std::string>{facts.hostname}
                                   : launch::expand_hostlist(facts.nodelist, "SLURM_STEP_NODELIST");
  if (static_cast<std::size_t>(p.node_rank) >= p.hosts.size()) {
    throw launch::LauncherEnvError(
        "dtrain: SLURM_STEP_NODELIST: this task is on node " + std::to_string(p.node_rank) +
        " of the step (counting from 0); expected at least " + std::to_string(p.node_rank + 1) +
        " hosts in \"" + facts.nodelist + "\", got " + std::to_string(p.hosts.size()));
  }
  return p;
}

}  // namespace

TaskBinding plan_task(const affinity::Node& node, const StepSettings& settings,
                      const TaskFacts& facts) {
  affinity::BindingFacts in;
  in.local_rank = facts.local_rank;
  in.local_size = facts.local_size;
  in.grant_env = facts.step_gpu_env;
  in.current_cpus = facts.step_cpus;
  in.framework = settings.framework;
  in.inherited_env = facts.job_env;
  in.placement = [&facts] { return placement(facts); };
  // Unlike `dtrain bind --topology`, an admin's topology= file is declared to describe this node,
  // so Slurm's GPU indices are honoured against it as well.
  const affinity::Binding decided =
      affinity::decide_binding(node, settings.policy.affinity, in,
                               {affinity::GrantRule::kAlways, affinity::Moment::kAtBirth});
  TaskBinding b;
  b.environment = decided.environment;
  b.environment.merge(
      launch::rank_place_environment({facts.rank, facts.size, facts.local_rank, facts.local_size}));
  if (!facts.job_id.empty()) b.environment["DTRAIN_JOB_ID"] = facts.job_id;
  if (!settings.run_dir.empty()) b.environment["DTRAIN_RUN_DIR"] = settings.run_dir;
  b.bind = decided.bind;
  b.report = report_line(node, decided.map, facts, b);
  return b;
}

}  // namespace dtrain::spank
