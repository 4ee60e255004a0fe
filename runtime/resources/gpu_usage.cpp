#include "resources/gpu_usage.hpp"

#include <climits>

#include "common/number_text.hpp"

namespace dtrain::runtime {

GpuChoice choose_rank_gpu(std::optional<std::string_view> cuda_visible_devices, int local_rank) {
  GpuChoice c;
  if (!cuda_visible_devices) {
    c.index = local_rank;
    return c;
  }
  const std::string_view first = cuda_visible_devices->substr(0, cuda_visible_devices->find(','));
  if (const auto n = dtrain::parse_whole_number(first, 0, INT_MAX)) {
    c.index = static_cast<int>(*n);
  } else if (first.starts_with("GPU-") || first.starts_with("MIG-")) {
    c.uuid = std::string(first);
  }
  return c;
}

std::optional<NvmlGpu> open_gpu(const NvmlApi& api, const GpuChoice& choice) {
  NvmlGpu gpu;
  gpu.api = &api;
  if (choice.index) {
    unsigned int count = 0;
    if (api.nvmlDeviceGetCount_v2(&count) != kNvmlSuccess ||
        static_cast<unsigned int>(*choice.index) >= count ||
        api.nvmlDeviceGetHandleByIndex_v2(static_cast<unsigned int>(*choice.index), &gpu.device) !=
            kNvmlSuccess) {
      return std::nullopt;
    }
  } else if (choice.uuid.empty() ||
             api.nvmlDeviceGetHandleByUUID(choice.uuid.c_str(), &gpu.device) != kNvmlSuccess) {
    return std::nullopt;
  }
  unsigned int index = 0;
  if (api.nvmlDeviceGetIndex(gpu.device, &index) != kNvmlSuccess || index > INT_MAX) {
    return std::nullopt;
  }
  gpu.index = static_cast<int>(index);
  return gpu;
}

records::GpuSample read_gpu(const NvmlGpu& gpu) {
  records::GpuSample s;
  s.index = gpu.index;
  NvmlUtilization util{};
  if (gpu.api->nvmlDeviceGetUtilizationRates(gpu.device, &util) == kNvmlSuccess) {
    s.util_percent = static_cast<double>(util.gpu);
  }
  NvmlMemory memory{};
  if (gpu.api->nvmlDeviceGetMemoryInfo(gpu.device, &memory) == kNvmlSuccess &&
      memory.used <= static_cast<unsigned long long>(LLONG_MAX)) {
    s.memory_bytes = static_cast<long long>(memory.used);
  }
  unsigned int milliwatts = 0;
  if (gpu.api->nvmlDeviceGetPowerUsage(gpu.device, &milliwatts) == kNvmlSuccess) {
    s.power_watts = milliwatts / 1000.0;
  }
  return s;
}

}  // namespace dtrain::runtime
