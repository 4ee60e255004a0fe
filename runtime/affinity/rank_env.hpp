// The environment one local rank gets from its entry of the rank map: the variables CUDA, NCCL
// and UCX read, plus dtrain's own DTRAIN_* record of the decision. Pure, so `dtrain bind`, the
// SPANK plugin and the planner export exactly the same text for the same decision.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "affinity/affinity.hpp"
#include "launch/launcher_env.hpp"

namespace dtrain::affinity {

struct RankEnvInputs {
  // CUDA_VISIBLE_DEVICES as the scheduler left it, split at commas. When it lists as many entries
  // as RankMap::visible_gpus, relative index i is written as entry i: correct whether the
  // scheduler numbered devices on the node (2,3) or inside a device cgroup (0,1), or used UUIDs.
  std::optional<std::vector<std::string>> inherited_visible_devices;
};

// The variables through which NCCL, Gloo and UCX take a rank's NICs, as rank_environment() sets
// them. A user or a job script may also set them by hand (init() keeps those: self_apply.hpp), and
// libdtrain's binding record writes those the rank has (docs/metrics.md).
inline constexpr std::string_view kNicLibraryVariables[] = {
    "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "UCX_NET_DEVICES"};

// Variables set (by name), for local rank `local_rank` of `map`:
//   DTRAIN_LOCAL_RANK, DTRAIN_LOCAL_SIZE, DTRAIN_CPUSET (list form), DTRAIN_GPUS (relative CUDA
//   indices), DTRAIN_NICS (names);
//   with GPUs: CUDA_VISIBLE_DEVICES (own or own-first order), CUDA_DEVICE_ORDER=PCI_BUS_ID;
//   with NICs: InfiniBand/Omni-Path NCCL_IB_HCA (exact names, "=mlx5_0") and UCX_NET_DEVICES
//   ("mlx5_0:1"); Ethernet NCCL_SOCKET_IFNAME ("=eth0"), GLOO_SOCKET_IFNAME ("eth0") and
//   UCX_NET_DEVICES; Slingshot NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME (its interface).
// Variables the decision does not cover (no GPUs, gpu none) are absent, i.e. left as they were.
launch::Environment rank_environment(const Node& node, const RankMap& map, int local_rank,
                                     const RankEnvInputs& inputs = {});

}  // namespace dtrain::affinity
