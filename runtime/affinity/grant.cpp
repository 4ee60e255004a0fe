#include "affinity/grant.hpp"

#include "affinity/cpuset.hpp"
#include "affinity/errors.hpp"

namespace dtrain::affinity {
namespace {

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    out.emplace_back(text.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<int> parse_index_list(std::string_view text, std::string_view what) {
  std::vector<int> out;
  std::string_view rest = text;
  // Parsed item by item (not as one set) so that the order given is kept: "3,1" means GPU 3 first.
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    CpuSet one;
    try {
      one = CpuSet::parse(item, what);
    } catch (const PolicyError&) {
      one = CpuSet();
    }
    if (one.empty()) {
      throw PolicyError("dtrain: affinity: " + std::string(what) +
                        ": expected a list of indices such as 0,2-3, got \"" + std::string(text) +
                        "\"");
    }
    for (int i : one.to_vector()) out.push_back(i);
  }
  return out;
}

GpuGrant gpu_grant_from_environment(const launch::Environment& env) {
  GpuGrant grant;
  if (auto it = env.find(std::string_view("CUDA_VISIBLE_DEVICES")); it != env.end()) {
    grant.inherited_visible_devices = split(it->second);
  }
  // SLURM_STEP_GPUS numbers GPUs on the node even when a device cgroup renumbers them for CUDA.
  for (const char* name :
       {"SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}) {
    auto it = env.find(std::string_view(name));
    if (it == env.end()) continue;
    grant.variable = name;
    try {
      grant.gpus = parse_index_list(it->second, name);
    } catch (const PolicyError&) {
      throw PolicyError("dtrain: affinity: " + std::string(name) +
                        ": cannot tell which GPUs it grants; expected indices such as 0,1 (or "
                        "pass --gpus-allowed), got \"" +
                        it->second + "\"");
    }
    break;
  }
  return grant;
}

}  // namespace dtrain::affinity
