#include "comm/transport/tcp/call_framing.hpp"

#include <cstring>

namespace dtrain::runtime {

net::Framed outgoing(const CallHeader& call, const void* data, std::size_t bytes) {
  net::Framed m;
  std::memcpy(m.header.data(), &call, sizeof call);
  m.header_len = sizeof call;
  m.data = static_cast<char*>(const_cast<void*>(data));  // only read: the send side
  m.data_len = bytes;
  return m;
}

net::Framed incoming(void* data, std::size_t bytes) {
  net::Framed m;
  m.header_len = sizeof(CallHeader);
  m.data = static_cast<char*>(data);
  m.data_len = bytes;
  return m;
}

CallHeader header_of(const net::Framed& message) {
  CallHeader h;
  std::memcpy(&h, message.header.data(), sizeof h);
  return h;
}

std::vector<int> broadcast_tree(int rank, int root, int size) {
  const int rel = (rank - root + size) % size;
  const auto absolute = [&](int r) { return (r + root) % size; };
  // The parent clears rel's lowest set bit; the children set each bit below it.
  int low = 1;
  while (low < size && (rel & low) == 0) low <<= 1;
  std::vector<int> tree;
  if (rel != 0) tree.push_back(absolute(rel - low));
  for (int bit = low >> 1; bit > 0; bit >>= 1) {
    if (rel + bit < size) tree.push_back(absolute(rel + bit));
  }
  return tree;
}

}  // namespace dtrain::runtime
