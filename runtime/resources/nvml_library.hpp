// NVIDIA's management library (libnvidia-ml.so.1, the driver's, what nvidia-smi reads), loaded
// with dlopen at run time as NCCL is (comm/transport/nccl/nccl_library.hpp): libdtrain has no
// DT_NEEDED on it, so it starts on nodes without a GPU driver, and the Meter's resource records
// carry GPU readings only where the library is. Its header is not needed: the few functions called
// are declared here from NVML's documented C API, which has kept these signatures (the _v2 symbols)
// since 2012.
#pragma once

#include <string>
#include <vector>

namespace dtrain::runtime {

// NVML's own types, as nvml.h declares them.
using NvmlReturn = int;  // nvmlReturn_t: NVML_SUCCESS is 0
inline constexpr NvmlReturn kNvmlSuccess = 0;
using NvmlDevice = struct NvmlDeviceOpaque*;  // nvmlDevice_t
struct NvmlUtilization {                      // nvmlUtilization_t
  unsigned int gpu;                           // percent of time a kernel ran, last sample period
  unsigned int memory;
};
struct NvmlMemory {  // nvmlMemory_t (version 1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct NvmlApi {
  NvmlReturn (*nvmlInit_v2)() = nullptr;
  NvmlReturn (*nvmlDeviceGetCount_v2)(unsigned int*) = nullptr;
  NvmlReturn (*nvmlDeviceGetHandleByIndex_v2)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*nvmlDeviceGetHandleByUUID)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*nvmlDeviceGetIndex)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*nvmlDeviceGetUtilizationRates)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*nvmlDeviceGetMemoryInfo)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*nvmlDeviceGetPowerUsage)(NvmlDevice, unsigned int*) = nullptr;  // milliwatts
  std::string file;  // the file dlopen loaded
};

// libnvidia-ml.so.1 (the driver installs only the versioned name on most systems).
std::vector<std::string> default_nvml_library_names();

// Loads the first of `names` and resolves every function of NvmlApi. Throws Error (kInvalid)
// naming the library and dlerror()'s text when none loads, or the missing function. Does not call
// nvmlInit. The library stays loaded.
NvmlApi load_nvml_api(const std::vector<std::string>& names);

// load_nvml_api(default_nvml_library_names()) and nvmlInit_v2, once per process (thread-safe):
// nullptr when the library is absent or does not start (no driver, no GPU). Never shut down: NVML
// counts its users, and the process may sample until it exits.
const NvmlApi* started_nvml();

}  // namespace dtrain::runtime
