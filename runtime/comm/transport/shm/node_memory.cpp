#include "comm/transport/shm/node_memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>

#include "comm/transport/shm/shm_allreduce.hpp"

namespace dtrain::runtime {

std::vector<char*> map_node_memory(int rank, const std::vector<int>& members,
                                   std::size_t piece_bytes, const NodeMemoryLinks& links,
                                   PosixShm& memory) {
  const std::size_t stride =
      (ShmAllreduce::segment_bytes(piece_bytes, static_cast<int>(members.size())) + 4095) / 4096 *
      4096;
  const std::size_t bytes = stride * members.size();
  const int first = members.front();
  std::array<char, 64> object{};  // the name, empty when the first member could not create it
  PosixShm shm;
  if (rank == first) {
    const std::string candidate = "/dtrain-" + std::to_string(::getpid()) + "-" +
                                  std::to_string(std::random_device{}() & 0xffffffu);
    try {
      shm = PosixShm::create(candidate, bytes);
      std::memcpy(object.data(), candidate.data(), candidate.size());
    } catch (const Error&) {
      object[0] = '\0';
    }
  }
  // The name passes down the node's members as a chain, each receiving it from the member before
  // and sending it to the one after: every member connects to at most two others (on a host of
  // 256 ranks the first member would otherwise hold a connection to each), and in the usual
  // layout those are its ring neighbours, connected anyway.
  const auto self =
      static_cast<std::size_t>(std::find(members.begin(), members.end(), rank) - members.begin());
  if (self > 0) links.recv(members[self - 1], object.data(), object.size());
  if (self + 1 < members.size()) links.send(members[self + 1], object.data(), object.size());
  const std::string object_name(object.data());
  std::int32_t mapped = object_name.empty() ? 0 : 1;
  if (rank != first && mapped == 1) {
    try {
      shm = PosixShm::open(object_name, bytes);
    } catch (const Error&) {
      mapped = 0;
    }
  }
  mapped = links.least(mapped);
  if (rank == first && !object_name.empty()) PosixShm::unlink(object_name);  // all have it
  if (mapped == 0) return {};
  std::vector<char*> segments;
  for (std::size_t m = 0; m < members.size(); ++m) segments.push_back(shm.data() + stride * m);
  ShmAllreduce::init_segment(segments[self]);
  links.barrier();  // every segment prepared before anyone's first allreduce
  memory = std::move(shm);
  return segments;
}

}  // namespace dtrain::runtime
