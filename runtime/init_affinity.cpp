#include "init_affinity.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "affinity/process_binding.hpp"
#include "affinity/self_apply.hpp"
#include "affinity/topology.hpp"
#include "launch/launcher_env.hpp"

namespace dtrain::runtime {
namespace {

// The affinity library's messages start with "dtrain: "; nested after our own prefix it goes.
std::string without_prefix(const char* message) {
  std::string_view m(message);
  if (m.substr(0, 8) == "dtrain: ") m.remove_prefix(8);
  return std::string(m);
}

// This machine's topology is a convenience: a node where it cannot be used still trains, as it
// did before init() applied anything. One line per rank says why.
std::string skipped(const std::string& cause) {
  std::fprintf(stderr,
               "dtrain: affinity: not applied: %s (set DTRAIN_AFFINITY=off to skip this step)\n",
               cause.c_str());
  return "skipped: " + cause;
}

}  // namespace

std::string apply_init_affinity(const WorldInfo& world, const Settings& settings) {
  const affinity::SelfApplyMode mode = settings.affinity;
  if (settings.launcher_applied) return "launcher";
  if (mode == affinity::SelfApplyMode::kOff) return "off";
  if (mode == affinity::SelfApplyMode::kAuto && world.bootstrap == "single") {
    // One process of its own: binding it to one NUMA domain would only take cores away.
    return "off: single process without a launcher";
  }

  const std::string& file = settings.topology;
  const bool live = file.empty();
  auto invalid = [&](const std::exception& e) {
    return Error(Error::Code::kInvalid,
                 "dtrain: affinity: DTRAIN_TOPOLOGY=" + file + ": " + without_prefix(e.what()));
  };

  affinity::Node node;
  try {
    node = live ? affinity::load_live_node(affinity::LiveDiscovery::kWithoutGpuRuntimes)
                : affinity::load_node_xml(file);
  } catch (const std::exception& e) {
    if (!live) throw invalid(e);
    return skipped(without_prefix(e.what()));
  }

  affinity::SelfApplyFacts facts;
  facts.local_rank = world.local_rank;
  facts.local_size = world.local_size;
  facts.env = launch::current_environment();
  if (node.is_this_machine) facts.current_cpus = affinity::current_cpu_affinity();
  affinity::SelfApply plan;
  try {
    plan = affinity::plan_self_apply(node, facts);
  } catch (const std::exception& e) {
    if (!live) throw invalid(e);
    return skipped(without_prefix(e.what()));
  }

  // Before any CPU binding: the GPU choice is what matters most, and it must reach the CUDA
  // runtime, which reads CUDA_VISIBLE_DEVICES once, when the process first initialises it.
  for (const auto& [name, value] : plan.environment) ::setenv(name.c_str(), value.c_str(), 1);
  if (!plan.bind) return "init: " + plan.summary + " not bound (" + plan.not_bound + ")";
  try {
    // Every thread: PMIx's, MPI's and the application's may already exist.
    affinity::bind_all_threads(*plan.bind);
  } catch (const std::exception& e) {
    const std::string cause = without_prefix(e.what());
    std::fprintf(stderr, "dtrain: affinity: CPUs not bound: %s\n", cause.c_str());
    return "init: " + plan.summary + " not bound (" + cause + ")";
  }
  return "init: " + plan.summary + " bound";
}

}  // namespace dtrain::runtime
