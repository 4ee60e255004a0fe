// How the solver maps ranks to devices: one small value with a parser per field, so the CLI flags,
// the job spec's `affinity:` block and the SPANK plugin's options accept the same words and
// reject the same mistakes with the same message.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dtrain::affinity {

enum class GpuPolicy {
  kClosest,   // ranks follow the GPUs in CPU-locality order (the Polaris reversal falls out)
  kIdentity,  // local rank r gets GPU r (mod the GPU count), as torchrun assumes
  kNone,      // no GPU per rank; CUDA_VISIBLE_DEVICES is left alone
};

enum class GpuVisibility {
  kOwn,       // CUDA_VISIBLE_DEVICES lists only the rank's GPUs
  kOwnFirst,  // every GPU stays visible, the rank's own first: CUDA IPC/P2P keeps working
};

enum class CpuPolicy {
  kNuma,  // the cores of the rank's GPU's NUMA domain, split evenly; whole cores
  kNone,  // no CPU binding; the rank's cpuset is every allowed PU
};

enum class NicPolicy {
  kClosest,  // the high-speed NIC nearest the rank's GPU by PCI distance, ties balanced
  kAll,      // every high-speed NIC
  kNone,     // no NIC variables
};

struct Policy {
  GpuPolicy gpu = GpuPolicy::kClosest;
  GpuVisibility gpu_visibility = GpuVisibility::kOwn;
  CpuPolicy cpu = CpuPolicy::kNuma;
  NicPolicy nic = NicPolicy::kClosest;

  bool operator==(const Policy&) const = default;
};

// Each parser throws PolicyError naming the setting and the accepted words, e.g.
// `dtrain: affinity: --gpu: unknown policy "nearest"; expected closest, identity or none, got
// "nearest"`. `what` is how the caller's user spelled the setting (a flag, a spec field).
GpuPolicy parse_gpu_policy(std::string_view text, std::string_view what = "gpu");
GpuVisibility parse_gpu_visibility(std::string_view text, std::string_view what = "gpu_visibility");
CpuPolicy parse_cpu_policy(std::string_view text, std::string_view what = "cpu");
NicPolicy parse_nic_policy(std::string_view text, std::string_view what = "nic");

std::string_view to_string(GpuPolicy p);
std::string_view to_string(GpuVisibility v);
std::string_view to_string(CpuPolicy p);
std::string_view to_string(NicPolicy p);

// The accepted words, in the order the messages and --help list them.
const std::vector<std::string_view>& gpu_policy_names();
const std::vector<std::string_view>& gpu_visibility_names();
const std::vector<std::string_view>& cpu_policy_names();
const std::vector<std::string_view>& nic_policy_names();

}  // namespace dtrain::affinity
