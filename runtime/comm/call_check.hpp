// What one rank passed to a collective, as the other ranks compare it: ranks that pass different
// counts, element types, operations or roots to one collective get Error kInvalid naming them,
// on every rank, instead of each other's bytes read as their own. Compared where it costs nothing
// measurable: the node's shared memory (ShmAllreduce: three loads per rank and piece) and the TCP
// backend's messages (a 16-byte CallHeader in front of each, sent and read in the same system
// call as the payload). MPI's own collectives are not checked, as MPI does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

struct CallWhat {
  // The Communicator's calls, the pieces the hierarchy hands to a node's shared memory, the
  // backend's own agreements (the set-up votes and the clean end wait for every rank, as
  // MPI_Finalize does), and the collectives built on point-to-point messages (their header
  // travels in each message's, point_to_point/wire_format.hpp; kAlltoallv's count is 0: its
  // blocks' sizes are the messages' own, compared with their receives').
  enum class Kind : std::uint8_t {
    kAllreduce,
    kReducePiece,
    kGatherPiece,
    kReduceScatter,
    kAllgather,
    kBroadcast,
    kBarrier,
    kSetUp,
    kFinalize,
    kGather,
    kScatter,
    kReduce,
    kAlltoallv,
  };
  Kind kind = Kind::kAllreduce;
  DType type = DType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  std::uint32_t root = 0;  // kBroadcast's, kGather's, kScatter's, kReduce's

  // One word, equal for equal calls: kind, type, op in the low bytes, the root above.
  std::uint64_t pack() const;
  static CallWhat unpack(std::uint64_t word);
};

struct CallSeen {
  int rank;
  std::uint64_t count;
  CallWhat what;
};

// What the rank did, as a predicate: "passed 4097 float32 elements (sum)", "passed 4096 float32
// elements to broadcast from root 2", "called barrier".
std::string describe_call(std::uint64_t count, const CallWhat& what);

// "<ranks> passed different calls to one collective: rank 0 passed 4097 float32 elements
// (sum), rank 1 passed 4096 float32 elements (sum); every rank must pass the same number of
// elements, element type and operation". `who`: "ranks of this node" or "ranks"; `calls`: the
// calls compared, rank 0's (or the first) first; a few differing ranks are named, the rest
// counted. `name`: how a rank is named ("rank 3" unless given; a group's "group rank 1 (world
// rank 5, on n2)").
std::string mismatch_text(std::string_view who, const std::vector<CallSeen>& calls,
                          const std::function<std::string(int rank)>& name = {});

// The 16 bytes in front of each TCP message of a call: its count and packed CallWhat. Host byte
// order, as the abort frames: every rank of a job runs the same build.
struct CallHeader {
  std::uint64_t count = 0;
  std::uint64_t what = 0;
  static CallHeader of(std::uint64_t count, const CallWhat& what) { return {count, what.pack()}; }
  bool operator==(const CallHeader&) const = default;
};
static_assert(sizeof(CallHeader) == 16);

}  // namespace dtrain::runtime
