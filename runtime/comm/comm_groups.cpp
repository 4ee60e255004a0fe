// dtrain::Comm's sub-communicators (split, subgroup): the members and the group's message-space id
// (group_ids.hpp: agreed over this communicator's messages, or the caller's number), then a group
// communicator and an engine of its own (group_communicator.hpp).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "comm/algorithms/recursive_doubling.hpp"
#include "comm/engine.hpp"
#include "comm/group_communicator.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "comm/point_to_point/message_space.hpp"

namespace dtrain {
namespace {

// The message space in which the members of a group being made agree on its id: its own, above
// every group's (group_ids.hpp), so that no communicator's messages match them. Each pair of
// members makes its groups in the same order (as MPI and torch require), and its agreements match
// in that order.
constexpr std::int64_t kAgreementSpace = (std::int64_t{1} << 31) - 1;

runtime::Mailbox& mailbox_for_groups(runtime::Engine& e, const char* op) {
  if (runtime::Mailbox* m = e.backend().mailbox()) return *m;
  throw Error(Error::Code::kInvalid, std::string("dtrain: ") + op + ": the " +
                                         std::string(e.backend().backend()) +
                                         " backend has no sub-communicators yet; expected the tcp "
                                         "or mpi backend (ctx.comm()) or a single process");
}

}  // namespace

Comm Comm::make_group(const std::vector<int>& members, std::int64_t id,
                      std::optional<std::chrono::milliseconds> timeout) {
  runtime::Engine& e = *engine_;
  runtime::Mailbox& mailbox = mailbox_for_groups(e, "split");
  const runtime::MessageSpace& here = e.backend().message_space();
  std::vector<int> world_of;
  for (int r : members) world_of.push_back(here.world(r));
  const int group_rank =
      static_cast<int>(std::find(members.begin(), members.end(), rank()) - members.begin());
  const int world_size =
      e.backend().message_space().size() == 0 ? size() : static_cast<int>(here.group_of()->size());
  runtime::MessageSpace space(id, std::move(world_of), world_size);
  const auto n = static_cast<int>(members.size());
  runtime::Settings settings = e.settings();
  if (timeout) {
    settings.timeout = *timeout;
    settings.timeout_source = runtime::TimeoutSource::kCaller;
  }
  auto engine = std::make_shared<runtime::Engine>(
      runtime::make_group_communicator(mailbox, std::move(space), group_rank,
                                       std::string(e.backend().backend()), settings.deadline()),
      group_rank, n, settings);
  return Comm(std::move(engine));
}

std::optional<Comm> Comm::split(int color, int key) {
  if (color < 0 && color != kNoGroup) {
    throw Error(Error::Code::kInvalid, "dtrain: split: color; expected 0 or more, or kNoGroup (" +
                                           std::to_string(kNoGroup) + "), got " +
                                           std::to_string(color));
  }
  runtime::Mailbox& mailbox = mailbox_for_groups(*engine_, "split");
  const auto n = static_cast<std::size_t>(size());
  // Every rank's color, key and the lowest id its process has not used.
  const std::array<std::int64_t, 3> mine = {color, key, mailbox.group_ids().next()};
  std::vector<std::int64_t> all(3 * n);
  allgather(mine.data(), all.data(), 3, DType::kInt64);
  if (color == kNoGroup) return std::nullopt;
  std::vector<int> members;
  std::int64_t id = 0;
  for (std::size_t r = 0; r < n; ++r) {
    id = std::max(id, all[3 * r + 2]);
    if (all[3 * r] == color) members.push_back(static_cast<int>(r));
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[3 * static_cast<std::size_t>(a) + 1] < all[3 * static_cast<std::size_t>(b) + 1];
  });
  mailbox.group_ids().agreed(id, "split");
  return make_group(members, id);
}

std::optional<Comm> Comm::subgroup(std::span<const int> ranks,
                                   std::optional<std::chrono::milliseconds> timeout,
                                   std::optional<std::int64_t> number) {
  if (timeout && timeout->count() <= 0) {
    throw Error(Error::Code::kInvalid,
                "dtrain: subgroup: timeout; expected a positive duration, got " +
                    std::to_string(timeout->count()) + " ms");
  }
  std::set<int> seen;
  for (int r : ranks) {
    if (r < 0 || r >= size() || !seen.insert(r).second) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: subgroup: ranks: " + std::to_string(r) +
                      (r < 0 || r >= size()
                           ? " is out of range; expected 0 to " + std::to_string(size() - 1)
                           : " appears twice; expected each rank once"));
    }
  }
  runtime::Engine& e = *engine_;
  runtime::Mailbox& mailbox = mailbox_for_groups(e, "subgroup");
  const std::vector<int> members(ranks.begin(), ranks.end());
  if (!seen.contains(rank())) {
    // A number out of range is named on every rank, member or not; only members take it.
    if (number) runtime::GroupIds::check_number(*number, "subgroup");
    return std::nullopt;
  }
  if (number)
    return make_group(members, mailbox.group_ids().numbered(*number, "subgroup"), timeout);
  const runtime::MessageSpace& here = e.backend().message_space();
  std::vector<int> world_of;
  for (int r : members) world_of.push_back(here.world(r));
  const int world_size = here.size() == 0 ? size() : static_cast<int>(here.group_of()->size());
  // The members agree on the id: the largest any proposes (recursive doubling, log2(p) steps).
  const runtime::MessageSpace agreement(kAgreementSpace, world_of, world_size);
  const std::int64_t tag = agreement.call_tag(0);
  const int me =
      static_cast<int>(std::find(members.begin(), members.end(), rank()) - members.begin());
  runtime::RecursiveDoubling doubling(
      me, static_cast<int>(members.size()),
      [&](const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes,
          int from) {
        std::shared_ptr<runtime::Pending> r;
        // In the new group's numbering (the members' order), as its own errors name them.
        if (from >= 0) {
          r = mailbox.receive(recv, recv_bytes, agreement.world(from), tag, agreement.group_of());
        }
        if (to >= 0) {
          runtime::Mailbox::wait(
              *mailbox.send(send, send_bytes, agreement.world(to), tag, agreement.group_of()));
        }
        if (r) runtime::Mailbox::wait(*r);
      });
  std::int64_t id = mailbox.group_ids().next();
  doubling.allreduce(&id, &id, 1, DType::kInt64, ReduceOp::kMax);
  mailbox.group_ids().agreed(id, "subgroup");
  return make_group(members, id, timeout);
}

}  // namespace dtrain
