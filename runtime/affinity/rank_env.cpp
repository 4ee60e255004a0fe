#include "affinity/rank_env.hpp"

#include <string>

namespace dtrain::affinity {
namespace {

void append(std::string& list, const std::string& item) {
  if (!list.empty()) list += ',';
  list += item;
}

}  // namespace

launch::Environment rank_environment(const Node& node, const RankMap& map, int local_rank,
                                     const RankEnvInputs& inputs) {
  if (local_rank < 0 || local_rank >= static_cast<int>(map.ranks.size())) {
    throw PolicyError("dtrain: affinity: local rank: expected 0-" +
                      std::to_string(static_cast<int>(map.ranks.size()) - 1) + ", got " +
                      std::to_string(local_rank));
  }
  const auto& rank = map.ranks[static_cast<std::size_t>(local_rank)];
  launch::Environment env;
  env["DTRAIN_LOCAL_RANK"] = std::to_string(local_rank);
  env["DTRAIN_LOCAL_SIZE"] = std::to_string(map.ranks.size());
  env["DTRAIN_CPUSET"] = rank.cpus.to_list();

  std::string gpus;
  for (int g : rank.gpus) append(gpus, std::to_string(g));
  env["DTRAIN_GPUS"] = gpus;
  if (!rank.gpus.empty()) {
    const auto& inherited = inputs.inherited_visible_devices;
    const bool map_through = inherited && inherited->size() == map.visible_gpus.size();
    std::string visible;
    for (int rel : rank.visible_gpus) {
      append(visible,
             map_through ? (*inherited)[static_cast<std::size_t>(rel)] : std::to_string(rel));
    }
    env["CUDA_VISIBLE_DEVICES"] = visible;
    // CUDA's default order is "fastest first", not the PCI order the indices above are in.
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  }

  std::string names;
  std::string hcas;
  std::string ifnames;
  std::string ucx;
  for (int n : rank.nics) {
    const auto& nic = node.nics[static_cast<std::size_t>(n)];
    append(names, nic.name);
    switch (nic.kind) {
      case NicKind::kInfiniBand:
      case NicKind::kOmniPath:
        append(hcas, nic.name);
        append(ucx, nic.name + ":1");
        break;
      case NicKind::kEthernet:
        append(ifnames, nic.netdev.empty() ? nic.name : nic.netdev);
        append(ucx, nic.netdev.empty() ? nic.name : nic.netdev);
        break;
      case NicKind::kSlingshot:
        append(ifnames, nic.netdev.empty() ? nic.name : nic.netdev);
        break;
    }
  }
  env["DTRAIN_NICS"] = names;
  // A leading "=" makes NCCL match names exactly: "mlx5_1" alone would also select mlx5_10.
  if (!hcas.empty()) env["NCCL_IB_HCA"] = "=" + hcas;
  if (!ifnames.empty()) {
    env["NCCL_SOCKET_IFNAME"] = "=" + ifnames;
    // Gloo (PyTorch's CPU backend) takes plain names; without it Gloo resolves the hostname,
    // which on many clusters is the management network.
    env["GLOO_SOCKET_IFNAME"] = ifnames;
  }
  if (!ucx.empty()) env["UCX_NET_DEVICES"] = ucx;
  return env;
}

}  // namespace dtrain::affinity
