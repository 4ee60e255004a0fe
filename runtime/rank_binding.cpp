#include "rank_binding.hpp"

#include <string_view>

#include "affinity/process_binding.hpp"
#include "affinity/rank_env.hpp"
#include "records/output_tee.hpp"

namespace dtrain::runtime {

records::RankBinding describe_binding(const launch::Environment& env, const affinity::CpuSet& cpus,
                                      std::string host) {
  records::RankBinding b;
  b.host = std::move(host);
  b.cpus = cpus.to_list();
  if (const auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end()) b.gpus = it->second;
  const auto add = [&](std::string_view name) {
    const auto it = env.find(name);
    if (it != env.end() && !it->second.empty()) b.nics.emplace_back(name, it->second);
  };
  add("DTRAIN_NICS");
  for (std::string_view name : affinity::kNicLibraryVariables) add(name);
  return b;
}

records::RankBinding current_binding() {
  return describe_binding(launch::current_environment(), affinity::current_cpu_affinity(),
                          records::this_host());
}

}  // namespace dtrain::runtime
