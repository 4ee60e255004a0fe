#include "comm/point_to_point/wire_format.hpp"

#include <cstring>

namespace dtrain::runtime::wire {
namespace {

constexpr char kMagic[4] = {'D', 'T', 'P', '2'};
constexpr char kRingMagic[4] = {'D', 'T', 'S', '2'};

}  // namespace

void write_hello(char* out, int rank, int size, std::uint64_t key) {
  const std::int32_t r = rank;
  const std::int32_t s = size;
  std::memcpy(out, kMagic, 4);
  std::memcpy(out + 4, &r, 4);
  std::memcpy(out + 8, &s, 4);
  std::memcpy(out + 12, &key, 8);
}

void write_ring_hello(char* out, int rank, int size, std::uint64_t key) {
  write_hello(out, rank, size, key);
  std::memcpy(out, kRingMagic, 4);
}

int read_hello(const char* in, int size, std::uint64_t key) {
  std::int32_t r = -1;
  std::int32_t s = -1;
  std::uint64_t k = 0;
  std::memcpy(&r, in + 4, 4);
  std::memcpy(&s, in + 8, 4);
  std::memcpy(&k, in + 12, 8);
  const bool magic = std::memcmp(in, kMagic, 4) == 0 || hello_has_ring(in);
  if (!magic || s != size || k != key || r < 0 || r >= size) return -1;
  return r;
}

bool hello_has_ring(const char* in) { return std::memcmp(in, kRingMagic, 4) == 0; }

bool write_ring_name(char* out, const std::string& name) {
  if (name.size() >= kRingNameBytes) return false;
  std::memset(out, 0, kRingNameBytes);
  std::memcpy(out, name.data(), name.size());
  return true;
}

std::string read_ring_name(const char* in) {
  return std::string(in, ::strnlen(in, kRingNameBytes));
}

void write_header(char* out, const Header& h) {
  std::memcpy(out, &h.tag, 8);
  std::memcpy(out + 8, &h.bytes, 8);
  std::memcpy(out + 16, &h.call.count, 8);
  std::memcpy(out + 24, &h.call.what, 8);
}

Header read_header(const char* in) {
  Header h;
  std::memcpy(&h.tag, in, 8);
  std::memcpy(&h.bytes, in + 8, 8);
  std::memcpy(&h.call.count, in + 16, 8);
  std::memcpy(&h.call.what, in + 24, 8);
  return h;
}

std::string size_mismatch(const std::string& receive, std::uint64_t sent,
                          const std::string& sender) {
  return receive + ": " + sender + " sent " + std::to_string(sent) +
         " bytes; expected a message of the receive's size: send and receive the same count "
         "and type";
}

}  // namespace dtrain::runtime::wire
