// Which GPU is the rank's, and its readings through NVML (nvml_library.hpp), for the Meter's
// resource records. The choice is pure, for the unit tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "records/metric_record.hpp"
#include "resources/nvml_library.hpp"

namespace dtrain::runtime {

// The rank's GPU: the first entry of CUDA_VISIBLE_DEVICES, the device CUDA calls 0 (dtrain's
// affinity lists the rank's own GPU first, in PCI order with CUDA_DEVICE_ORDER=PCI_BUS_ID, the
// order of NVML's indices); an index, or a GPU-/MIG- UUID. Without CUDA_VISIBLE_DEVICES, the GPU
// of the rank's local index (the convention of torch.cuda.set_device(local_rank)). None when the
// variable names no device ("", "-1", Slurm's "NoDevFiles").
struct GpuChoice {
  std::optional<int> index;  // NVML's index
  std::string uuid;          // else, when not empty
  bool none() const { return !index && uuid.empty(); }
};
GpuChoice choose_rank_gpu(std::optional<std::string_view> cuda_visible_devices, int local_rank);

// The chosen GPU, opened through NVML: nothing when the node has no such GPU.
struct NvmlGpu {
  const NvmlApi* api = nullptr;
  NvmlDevice device = nullptr;
  int index = 0;  // NVML's index, written as "gpu"
};
std::optional<NvmlGpu> open_gpu(const NvmlApi& api, const GpuChoice& choice);

// Utilization, memory used and power now; a reading NVML refuses stays absent.
records::GpuSample read_gpu(const NvmlGpu& gpu);

}  // namespace dtrain::runtime
