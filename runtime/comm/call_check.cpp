#include "comm/call_check.hpp"

#include <algorithm>

namespace dtrain::runtime {

std::uint64_t CallWhat::pack() const {
  return static_cast<std::uint64_t>(kind) | static_cast<std::uint64_t>(type) << 8 |
         static_cast<std::uint64_t>(op) << 16 | static_cast<std::uint64_t>(root) << 24;
}

CallWhat CallWhat::unpack(std::uint64_t word) {
  return {static_cast<Kind>(word & 0xff), static_cast<DType>((word >> 8) & 0xff),
          static_cast<ReduceOp>((word >> 16) & 0xff), static_cast<std::uint32_t>(word >> 24)};
}

std::string describe_call(std::uint64_t count, const CallWhat& what) {
  std::string text =
      "passed " + std::to_string(count) + " " + std::string(to_string(what.type)) + " elements";
  const std::string op = " (" + std::string(to_string(what.op)) + ")";
  switch (what.kind) {
    case CallWhat::Kind::kAllreduce:
      return text + op;
    case CallWhat::Kind::kReducePiece:
      return text + " in a piece to reduce" + op;
    case CallWhat::Kind::kGatherPiece:
      return text + " in a piece to gather";
    case CallWhat::Kind::kReduceScatter:
      return text + " to reduce_scatter" + op;
    case CallWhat::Kind::kAllgather:
      return text + " to allgather";
    case CallWhat::Kind::kBroadcast:
      return text + " to broadcast from root " + std::to_string(what.root);
    case CallWhat::Kind::kBarrier:
      return "called barrier";
    case CallWhat::Kind::kSetUp:
      return "was setting up its communicator";
    case CallWhat::Kind::kFinalize:
      return "was ending its communicator (the Context's destruction)";
    case CallWhat::Kind::kGather:
      return text + " to gather at root " + std::to_string(what.root);
    case CallWhat::Kind::kScatter:
      return text + " to scatter from root " + std::to_string(what.root);
    case CallWhat::Kind::kReduce:
      return text + " to reduce" + op + " at root " + std::to_string(what.root);
    case CallWhat::Kind::kAlltoallv:
      return "passed " + std::string(to_string(what.type)) + " blocks to alltoallv";
  }
  return text;
}

namespace {

// What every rank must pass alike to a call of `kind`.
std::string what_must_match(CallWhat::Kind kind) {
  switch (kind) {
    case CallWhat::Kind::kBroadcast:
    case CallWhat::Kind::kGather:
    case CallWhat::Kind::kScatter:
      return "number of elements, element type and root";
    case CallWhat::Kind::kReduce:
      return "number of elements, element type, operation and root";
    case CallWhat::Kind::kAlltoallv:
      return "element type (and counts that match: a rank's send count to a peer is that peer's "
             "receive count from it)";
    default:
      return "number of elements, element type and operation";
  }
}

}  // namespace

std::string mismatch_text(std::string_view who, const std::vector<CallSeen>& calls,
                          const std::function<std::string(int rank)>& name) {
  const auto named = [&](int rank) { return name ? name(rank) : "rank " + std::to_string(rank); };
  // The first call, then each rank that passed another, up to a few: with hundreds of ranks on a
  // node one wrong rank is what matters, and the line must stay readable.
  constexpr std::size_t kNamed = 4;
  std::string text = std::string(who) +
                     " passed different calls to one collective: " + named(calls[0].rank) + " " +
                     describe_call(calls[0].count, calls[0].what);
  std::size_t shown = 0;
  std::size_t more = 0;
  for (std::size_t i = 1; i < calls.size(); ++i) {
    const CallSeen& c = calls[i];
    if (c.count == calls[0].count && c.what.pack() == calls[0].what.pack()) continue;
    if (shown == kNamed) {
      ++more;
      continue;
    }
    text += ", " + named(c.rank) + " " + describe_call(c.count, c.what);
    ++shown;
  }
  if (more > 0) text += ", and " + std::to_string(more) + " more ranks differ";
  // A broadcast has a root where the others have an operation.
  const bool same_kind = std::all_of(calls.begin(), calls.end(), [&](const CallSeen& c) {
    return c.what.kind == calls[0].what.kind;
  });
  return text + "; every rank must " + (same_kind ? "" : "call the same collective and ") +
         "pass the same " +
         what_must_match(same_kind ? calls[0].what.kind : CallWhat::Kind::kAllreduce);
}

}  // namespace dtrain::runtime
