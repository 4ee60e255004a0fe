#include "launch/framework_env.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "common/number_text.hpp"
#include "common/words.hpp"

namespace dtrain::launch {
namespace {

constexpr std::array<std::pair<std::string_view, Framework>, 5> kFrameworks{{
    {"torch", Framework::kTorch},
    {"tensorflow", Framework::kTensorflow},
    {"jax", Framework::kJax},
    {"horovod", Framework::kHorovod},
    {"none", Framework::kNone},
}};

constexpr int kTensorflowPortBase = 20000;
constexpr int kTensorflowPortsPerJob = 128;
constexpr int kTensorflowJobSlots = 96;  // 20000 + 96 * 128 = 32288, below the ephemeral range

// Numeric job ids map directly (consecutive jobs get different ports); anything else is hashed
// with FNV-1a so the result is the same on every node and every run.
std::uint64_t job_number(std::string_view job_id) {
  const auto value = dtrain::parse_whole_number(job_id, 0, std::numeric_limits<long long>::max());
  if (value) return static_cast<std::uint64_t>(*value);
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : job_id) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

void check(const JobPlacement& p) {
  const bool ok = p.size >= 1 && p.rank >= 0 && p.rank < p.size && p.local_size >= 1 &&
                  p.local_rank >= 0 && p.local_rank < p.local_size && !p.hosts.empty() &&
                  p.node_rank >= 0 && static_cast<std::size_t>(p.node_rank) < p.hosts.size();
  if (!ok) {
    throw std::invalid_argument(
        "dtrain: framework environment: inconsistent placement: rank " + std::to_string(p.rank) +
        " of " + std::to_string(p.size) + ", local rank " + std::to_string(p.local_rank) + " of " +
        std::to_string(p.local_size) + ", node " + std::to_string(p.node_rank) + " of " +
        std::to_string(p.hosts.size()) + " host(s)");
  }
}

std::string tf_config(const JobPlacement& p) {
  // Every worker's address must be known to every rank, which only the block layout that srun
  // (default distribution) and mpirun -npernode produce makes computable; anything else would
  // give a silently wrong cluster spec.
  const auto nodes = static_cast<int>(p.hosts.size());
  if (p.size != nodes * p.local_size || p.rank != p.node_rank * p.local_size + p.local_rank) {
    throw LauncherEnvError(
        "dtrain: framework tensorflow: TF_CONFIG needs ranks laid out in blocks of equal size per "
        "node (rank = node * ranks_per_node + local rank); expected " +
        std::to_string(nodes) + " node(s) x " + std::to_string(p.local_size) + " = " +
        std::to_string(nodes * p.local_size) + " ranks with rank " +
        std::to_string(p.node_rank * p.local_size + p.local_rank) + " here, got rank " +
        std::to_string(p.rank) + " of " + std::to_string(p.size));
  }
  nlohmann::ordered_json workers = nlohmann::ordered_json::array();
  for (int r = 0; r < p.size; ++r) {
    workers.push_back(p.hosts[static_cast<std::size_t>(r / p.local_size)] + ":" +
                      std::to_string(tensorflow_worker_port(p.job_id, r % p.local_size)));
  }
  nlohmann::ordered_json config;
  config["cluster"]["worker"] = std::move(workers);
  config["task"]["type"] = "worker";
  config["task"]["index"] = p.rank;
  return config.dump();
}

}  // namespace

Framework parse_framework(std::string_view text, std::string_view what) {
  for (const auto& [name, value] : kFrameworks) {
    if (name == text) return value;
  }
  throw FrameworkError("dtrain: " + std::string(what) + ": unknown framework \"" +
                       std::string(text) + "\"; expected " + join_alternatives(framework_names()) +
                       ", got \"" + std::string(text) + "\"");
}

std::string_view to_string(Framework f) {
  for (const auto& [name, value] : kFrameworks) {
    if (value == f) return name;
  }
  return "?";
}

const std::vector<std::string_view>& framework_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& entry : kFrameworks) out.push_back(entry.first);
    return out;
  }();
  return names;
}

int rendezvous_port(std::string_view job_id) {
  if (job_id.empty()) return 29500;
  return 61000 + static_cast<int>(job_number(job_id) % 4536);
}

int tensorflow_worker_port(std::string_view job_id, int local_rank) {
  if (local_rank < 0 || local_rank >= kTensorflowPortsPerJob) {
    throw std::invalid_argument("dtrain: framework tensorflow: local rank " +
                                std::to_string(local_rank) + " out of range; expected 0 to " +
                                std::to_string(kTensorflowPortsPerJob - 1));
  }
  const auto slot = static_cast<int>(job_number(job_id) % kTensorflowJobSlots);
  return kTensorflowPortBase + slot * kTensorflowPortsPerJob + local_rank;
}

const std::vector<std::string_view>& user_settable_rendezvous_variables() {
  static const std::vector<std::string_view> names = {"MASTER_ADDR", "MASTER_PORT",
                                                      "JAX_COORDINATOR_ADDRESS"};
  return names;
}

Environment framework_environment(Framework framework, const JobPlacement& p,
                                  const Environment& inherited) {
  Environment env;
  if (framework == Framework::kNone || framework == Framework::kHorovod) return env;
  check(p);
  const std::string& coordinator = p.hosts.front();
  const std::string port = std::to_string(rendezvous_port(p.job_id));
  switch (framework) {
    case Framework::kTorch:
      env["MASTER_ADDR"] = coordinator;
      env["MASTER_PORT"] = port;
      env["RANK"] = std::to_string(p.rank);
      env["LOCAL_RANK"] = std::to_string(p.local_rank);
      env["WORLD_SIZE"] = std::to_string(p.size);
      env["LOCAL_WORLD_SIZE"] = std::to_string(p.local_size);
      env["NODE_RANK"] = std::to_string(p.node_rank);
      env["GROUP_RANK"] = std::to_string(p.node_rank);  // torchrun's name for the node rank
      break;
    case Framework::kTensorflow:
      env["TF_CONFIG"] = tf_config(p);
      break;
    case Framework::kJax:
      env["JAX_COORDINATOR_ADDRESS"] = coordinator + ":" + port;
      env["JAX_NUM_PROCESSES"] = std::to_string(p.size);
      env["JAX_PROCESS_ID"] = std::to_string(p.rank);
      env["JAX_LOCAL_PROCESS_ID"] = std::to_string(p.local_rank);
      break;
    case Framework::kNone:
    case Framework::kHorovod:
      break;
  }
  for (std::string_view name : user_settable_rendezvous_variables()) {
    const auto set = inherited.find(name);
    if (set == inherited.end() || set->second.empty()) continue;
    if (const auto it = env.find(name); it != env.end()) env.erase(it);
  }
  return env;
}

JobPlacement placement_from_environment(const Environment& env, const LauncherInfo& launcher,
                                        std::string_view hostname) {
  auto get = [&](std::string_view name) -> const std::string* {
    auto it = env.find(name);
    return it == env.end() || it->second.empty() ? nullptr : &it->second;
  };
  JobPlacement p;
  p.rank = launcher.rank;
  p.size = launcher.size;
  p.local_rank = launcher.local_rank;
  p.local_size = launcher.local_size;

  std::string hosts_from;
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"}) {
    if (const auto* value = get(name)) {
      p.hosts = expand_hostlist(*value, name);
      hosts_from = name;
      break;
    }
  }
  if (hosts_from.empty()) {
    if (const auto* value = get("DTRAIN_HOSTS")) {
      p.hosts = expand_hostlist(*value, "DTRAIN_HOSTS");
      hosts_from = "DTRAIN_HOSTS";
    } else {
      p.hosts = {std::string(hostname)};
    }
  }
  // Node files list a host once per slot; a node appears once, in order of first appearance.
  std::vector<std::string> unique;
  for (auto& h : p.hosts) {
    if (std::find(unique.begin(), unique.end(), h) == unique.end()) unique.push_back(std::move(h));
  }
  p.hosts = std::move(unique);

  // srun says which node of the step this is; otherwise find this host in the list, and only
  // when the host names do not match (aliases, FQDNs) fall back to the block layout.
  const std::string* node_id = launcher.launcher == "slurm" ? get("SLURM_NODEID") : nullptr;
  if (node_id != nullptr) {
    p.node_rank = parse_launcher_count("SLURM_NODEID", *node_id, 0);
  } else if (auto it = std::find(p.hosts.begin(), p.hosts.end(), hostname); it != p.hosts.end()) {
    p.node_rank = static_cast<int>(it - p.hosts.begin());
  } else {
    p.node_rank = p.rank / std::max(1, p.local_size);
  }
  if (static_cast<std::size_t>(p.node_rank) >= p.hosts.size()) {
    throw LauncherEnvError("dtrain: launcher environment: " +
                           (hosts_from.empty() ? std::string("host list") : hosts_from) +
                           ": this process is on node " + std::to_string(p.node_rank) +
                           " of the job (counting from 0); expected at least " +
                           std::to_string(p.node_rank + 1) + " hosts in the list, got " +
                           std::to_string(p.hosts.size()));
  }

  for (const char* name : {"DTRAIN_JOB_ID", "SLURM_JOB_ID", "PBS_JOBID", "COBALT_JOBID"}) {
    if (const auto* value = get(name)) {
      // PBS job ids carry the server ("1234.polaris-pbs-01"); the number alone names the job.
      p.job_id = value->substr(0, value->find('.'));
      break;
    }
  }
  return p;
}

}  // namespace dtrain::launch
