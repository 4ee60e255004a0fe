#include "task_plan.hpp"

#include "affinity/framework_env.hpp"
#include "affinity/grant.hpp"
#include "affinity/rank_env.hpp"

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

}  // namespace

TaskBinding plan_task(const affinity::Node& node, const StepSettings& settings,
                      const TaskFacts& facts) {
  const affinity::Policy& policy = settings.policy.affinity;
  affinity::Restriction restriction;
  affinity::RankEnvInputs inputs;
  if (policy.gpu != affinity::GpuPolicy::kNone) {
    // Unlike `dtrain bind --topology`, an admin's topology= file is declared to describe this
    // node, so Slurm's GPU indices are honoured against it as well.
    auto grant = affinity::gpu_grant_from_environment(facts.step_gpu_env);
    restriction.gpus = std::move(grant.gpus);
    inputs.inherited_visible_devices = std::move(grant.inherited_visible_devices);
  }
  // CPU numbers only mean something on the machine they were read on.
  if (node.is_this_machine && facts.step_cpus) restriction.cpus = facts.step_cpus;

  const affinity::RankMap map = affinity::solve(node, facts.local_size, policy, restriction);
  TaskBinding b;
  b.environment = affinity::rank_environment(node, map, facts.local_rank, inputs);
  b.environment.merge(affinity::rank_place_environment(
      {facts.rank, facts.size, facts.local_rank, facts.local_size}));
  if (!facts.job_id.empty()) b.environment["DTRAIN_JOB_ID"] = facts.job_id;
  if (settings.framework != affinity::Framework::kNone) {
    affinity::JobPlacement p;
    p.rank = facts.rank;
    p.size = facts.size;
    p.local_rank = facts.local_rank;
    p.local_size = facts.local_size;
    p.node_rank = facts.node_rank;
    p.job_id = facts.job_id;
    p.hosts = facts.nodelist.empty()
                  ? std::vector<std::string>{facts.hostname}
                  : affinity::expand_hostlist(facts.nodelist, "SLURM_STEP_NODELIST");
    if (static_cast<std::size_t>(p.node_rank) >= p.hosts.size()) {
      throw affinity::LauncherEnvError(
          "dtrain: SLURM_STEP_NODELIST: this task is on node " + std::to_string(p.node_rank) +
          " of the step (counting from 0); expected at least " + std::to_string(p.node_rank + 1) +
          " hosts in \"" + facts.nodelist + "\", got " + std::to_string(p.hosts.size()));
    }
    b.environment.merge(affinity::framework_environment(settings.framework, p));
  }
  if (!settings.run_dir.empty()) b.environment["DTRAIN_RUN_DIR"] = settings.run_dir;
  if (node.is_this_machine && policy.cpu == affinity::CpuPolicy::kNuma) {
    b.bind = map.ranks[static_cast<std::size_t>(facts.local_rank)].cpus;
  }
  b.report = report_line(node, map, facts, b);
  return b;
}

}  // namespace dtrain::spank
