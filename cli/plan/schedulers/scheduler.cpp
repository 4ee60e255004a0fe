#include "plan/schedulers/scheduler.hpp"

#include "plan/schedulers/adapters.hpp"

namespace dtrain::plan {

JobShape SchedulerAdapter::shape(const JobSpec& spec, const std::string& spec_source,
                                 const SiteProfile& site) const {
  return job_shape(spec, spec_source, site);
}

std::string SchedulerAdapter::host(const PlanDraft&, int) const { return ""; }

std::vector<std::string> SchedulerAdapter::ignored_fields(const JobSpec&) const { return {}; }

std::string SchedulerAdapter::ignoring(const SiteProfile& site) const {
  return "site " + site.name;
}

void SchedulerAdapter::check(PlanDraft&) const {}

Env SchedulerAdapter::dtrain_variables(const PlanDraft&) const { return {}; }

std::string SchedulerAdapter::dtrain_exe(const PlanDraft& draft) const {
  return draft.inputs.dtrain_exe;
}

std::optional<HeldJob> SchedulerAdapter::held_job(const launch::Environment& env) const {
  const std::string_view variable = held_job_variable();
  if (variable.empty()) return std::nullopt;
  const auto it = env.find(variable);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  HeldJob job;
  job.id = it->second;
  return job;
}

void SchedulerAdapter::unsupported(const char* what) const {
  throw std::logic_error("dtrain: " + std::string(what) + " for scheduler " + std::string(name()));
}

Argv SchedulerAdapter::submit_held_command(const std::string&) const {
  unsupported("submit_held_command");
}
Argv SchedulerAdapter::submit_command(const std::string&) const { unsupported("submit_command"); }
std::string SchedulerAdapter::parse_submitted(std::string_view) const {
  unsupported("parse_submitted");
}
Argv SchedulerAdapter::release_command(const std::string&) const { unsupported("release_command"); }
Argv SchedulerAdapter::cancel_command(const std::string&) const { unsupported("cancel_command"); }
Argv SchedulerAdapter::status_command(const std::string&) const { unsupported("status_command"); }
std::optional<JobStatus> SchedulerAdapter::parse_status(std::string_view) const {
  unsupported("parse_status");
}
bool SchedulerAdapter::forgot_job(std::string_view, int) const { unsupported("forgot_job"); }
Argv SchedulerAdapter::failed_nodes_command(const std::string&) const { return {}; }
std::vector<NodeFailure> SchedulerAdapter::parse_node_failures(std::string_view) const {
  return {};
}
Allocation SchedulerAdapter::allocation(const launch::Environment&) const {
  unsupported("allocation");
}
Argv SchedulerAdapter::lost_nodes_command(const Allocation&) const {
  unsupported("lost_nodes_command");
}
std::vector<LostNode> SchedulerAdapter::parse_lost_nodes(std::string_view) const {
  unsupported("parse_lost_nodes");
}
Argv SchedulerAdapter::shrink_launch(const Argv&, int, const std::vector<std::string>&) const {
  unsupported("shrink_launch");
}
std::vector<std::string> SchedulerAdapter::shrunk_launch_unset() const {
  unsupported("shrunk_launch_unset");
}
std::vector<std::string> SchedulerAdapter::parse_failed_nodes(std::string_view output) const {
  std::vector<std::string> out;
  for (const auto& node : parse_node_failures(output)) {
    out.push_back(node.reason.empty() ? node.name : node.name + " (" + node.reason + ")");
  }
  return out;
}

namespace {

std::vector<const SchedulerAdapter*>& all_adapters() {
  static std::vector<const SchedulerAdapter*> all = {&local_adapter(),  &slurm_adapter(),
                                                     &pbspro_adapter(), &cobalt_adapter(),
                                                     &pbs_adapter(),    &k8s_adapter()};
  return all;
}

}  // namespace

const SchedulerAdapter& scheduler_of(const SiteProfile& site) {
  if (const SchedulerAdapter* a = scheduler_adapter(site.scheduler)) return *a;
  throw std::logic_error("dtrain: no adapter for scheduler \"" + site.scheduler + "\"");
}

void register_scheduler(const SchedulerAdapter& adapter) {
  if (scheduler_adapter(adapter.name()) != nullptr) {
    throw std::logic_error("dtrain: scheduler \"" + std::string(adapter.name()) +
                           "\" is registered twice");
  }
  all_adapters().push_back(&adapter);
}

const SchedulerAdapter* scheduler_adapter(std::string_view name) {
  for (const SchedulerAdapter* a : all_adapters()) {
    if (a->name() == name) return a;
  }
  return nullptr;
}

std::vector<std::string> scheduler_names() {
  std::vector<std::string> names;
  for (const SchedulerAdapter* a : all_adapters()) names.emplace_back(a->name());
  return names;
}

std::string job_number(std::string_view job_id) {
  return std::string(job_id.substr(0, job_id.find('.')));
}

}  // namespace dtrain::plan
