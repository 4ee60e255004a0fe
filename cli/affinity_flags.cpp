#include "affinity_flags.hpp"

#include "affinity/grant.hpp"
#include "affinity/policy.hpp"
#include "common/words.hpp"

namespace dtrain::cli {

affinity::Policy AffinityFlags::policy() const {
  affinity::Policy p;
  p.gpu = affinity::parse_gpu_policy(gpu, "--gpu");
  p.gpu_visibility = affinity::parse_gpu_visibility(gpu_visibility, "--gpu-visibility");
  p.cpu = affinity::parse_cpu_policy(cpu, "--cpu");
  p.nic = affinity::parse_nic_policy(nic, "--nic");
  return p;
}

affinity::Restriction AffinityFlags::restriction() const {
  affinity::Restriction r;
  if (!gpus_allowed.empty()) r.gpus = affinity::parse_index_list(gpus_allowed, "--gpus-allowed");
  if (!cpus_allowed.empty()) r.cpus = affinity::CpuSet::parse(cpus_allowed, "--cpus-allowed");
  return r;
}

void add_affinity_flags(CLI::App& cmd, AffinityFlags& flags) {
  // The words are the affinity library's (policy.cpp): a new one appears here by itself.
  cmd.add_option("--gpu", flags.gpu,
                 "GPU policy: " + join_alternatives(affinity::gpu_policy_names()))
      ->capture_default_str();
  cmd.add_option("--gpu-visibility", flags.gpu_visibility,
                 "CUDA_VISIBLE_DEVICES: own, or own-first (all GPUs, the rank's first)")
      ->capture_default_str();
  cmd.add_option("--cpu", flags.cpu,
                 "CPU policy: " + join_alternatives(affinity::cpu_policy_names()))
      ->capture_default_str();
  cmd.add_option("--nic", flags.nic,
                 "NIC policy: " + join_alternatives(affinity::nic_policy_names()))
      ->capture_default_str();
  cmd.add_option("--gpus-allowed", flags.gpus_allowed,
                 "Only these GPUs (node indices in PCI order, e.g. 0,2-3), as a scheduler grants");
  cmd.add_option("--cpus-allowed", flags.cpus_allowed,
                 "Only these CPUs (list form, e.g. 0-15,64-79), as a scheduler grants");
}

}  // namespace dtrain::cli
