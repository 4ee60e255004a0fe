#include "affinity/net_namespace.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <map>

namespace dtrain::affinity {

void fit_nics_to_namespace(Node& node, const std::vector<NetInterface>& present) {
  const auto is_present = [&](const std::string& name) {
    return std::any_of(present.begin(), present.end(),
                       [&](const NetInterface& i) { return i.name == name; });
  };
  std::erase_if(node.nics, [&](const Nic& n) {
    if (n.kind == NicKind::kInfiniBand || n.kind == NicKind::kOmniPath) return false;
    return !is_present(n.netdev.empty() ? n.name : n.netdev);
  });
  if (!node.nics.empty()) return;
  for (const NetInterface& i : present) {
    if (!i.up || i.loopback || !i.has_address) continue;
    Nic n;
    n.kind = NicKind::kEthernet;
    n.name = i.name;
    n.netdev = i.name;
    n.locality = node.all_pus();
    if (!node.numa.empty()) n.numa = node.numa.front().os_index;
    if (!node.packages.empty()) n.package = node.packages.front().os_index;
    node.nics.push_back(std::move(n));
  }
}

std::vector<NetInterface> namespace_interfaces() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::map<std::string, NetInterface> by_name;  // one entry per interface, sorted by name
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_name == nullptr) continue;
    NetInterface& i = by_name[a->ifa_name];
    i.name = a->ifa_name;
    i.up = i.up || (a->ifa_flags & IFF_UP) != 0;
    i.loopback = i.loopback || (a->ifa_flags & IFF_LOOPBACK) != 0;
    if (a->ifa_addr == nullptr) continue;
    if (a->ifa_addr->sa_family == AF_INET) i.has_address = true;
    if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      // A link-local address alone (fe80::, every interface has one) reaches no other subnet.
      if (!IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) i.has_address = true;
    }
  }
  ::freeifaddrs(list);
  std::vector<NetInterface> out;
  for (auto& [name, i] : by_name) out.push_back(std::move(i));
  return out;
}

}  // namespace dtrain::affinity
