#include "resources/nvml_library.hpp"

#include "dtrain/dtrain.hpp"
#include "dynamic_library.hpp"

namespace dtrain::runtime {

std::vector<std::string> default_nvml_library_names() { return {"libnvidia-ml.so.1"}; }

NvmlApi load_nvml_api(const std::vector<std::string>& names) {
  LoadedLibrary lib = open_first_library(
      names, "nvml", "NVIDIA's management library",
      "GPU readings need the NVIDIA driver's libnvidia-ml.so.1 on the library path");
  NvmlApi api;
  const std::string expected = "NVML of an NVIDIA driver (libnvidia-ml.so.1)";
#define DTRAIN_NVML_RESOLVE(name) resolve_symbol(api.name, lib, "nvml", #name, expected)
  DTRAIN_NVML_RESOLVE(nvmlInit_v2);
  DTRAIN_NVML_RESOLVE(nvmlDeviceGetCount_v2);
  DTRAIN_NVML_RESOLVE(nvmlDeviceGetHandleByIndex_v2);
  DTRAIN_NVML_RESOLVE(nvmlDeviceGetHandleByUUID);
  DTRAIN_NVML_RESOLVE(nvmlDeviceGetIndex);
  DTRAIN_NVML_RESOLVE(nvmlDeviceGetUtilizationRates);
  DTRAIN_NVML_RESOLVE(nvmlDeviceGetMemoryInfo);
  DTRAIN_NVML_RESOLVE(nvmlDeviceGetPowerUsage);
#undef DTRAIN_NVML_RESOLVE
  api.file = lib.file;
  lib.handle.release();  // loaded for good: the sampler may call it until the process exits
  return api;
}

const NvmlApi* started_nvml() {
  static const NvmlApi* const api = []() -> const NvmlApi* {
    try {
      static const NvmlApi loaded = load_nvml_api(default_nvml_library_names());
      return loaded.nvmlInit_v2() == kNvmlSuccess ? &loaded : nullptr;
    } catch (const Error&) {
      return nullptr;  // no driver here: resource records go without GPU readings
    }
  }();
  return api;
}

}  // namespace dtrain::runtime
