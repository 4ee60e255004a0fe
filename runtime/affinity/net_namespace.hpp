// The network interfaces a process can actually use are those of its network namespace, while
// hwloc describes NICs from /sys/class/net and the PCI tree, which in a container or a network
// namespace (a Slurm node made of one, Kubernetes pods, a namespace-isolated job) can list the
// host's interfaces instead. A live topology is fitted to the namespace here, so that NCCL/Gloo
// are never pointed at an interface that does not exist where the rank runs.
#pragma once

#include <string>
#include <vector>

#include "affinity/topology.hpp"

namespace dtrain::affinity {

// One interface of the calling process's network namespace.
struct NetInterface {
  std::string name;
  bool up = false;
  bool loopback = false;
  bool has_address = false;  // an IPv4 or global IPv6 address: something peers can connect to
};

// Pure. Drops the Ethernet and Slingshot NICs whose interface is not in `present` (verbs devices
// are kept: RDMA does not go through the namespace's interfaces). When no NIC is left, each
// interface of `present` that is up, not loopback and has an address becomes an Ethernet NIC
// without a PCI place (its locality is every PU): the namespace's own way out, e.g. a veth.
void fit_nics_to_namespace(Node& node, const std::vector<NetInterface>& present);

// The interfaces of this process's network namespace (getifaddrs); empty when it fails.
std::vector<NetInterface> namespace_interfaces();

}  // namespace dtrain::affinity
