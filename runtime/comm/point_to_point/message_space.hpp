// The ranks and tags one communicator's messages use on its context's mailbox (mailbox.hpp),
// which every communicator of the context shares: the world's and each sub-communicator's
// (Comm::split, Comm::subgroup; group_communicator.hpp), so that a group costs no rendezvous and
// no connection a pair of ranks does not already have.
//   - Ranks: the mailbox speaks world ranks; a group translates its own ranks both ways.
//   - Tags: each communicator has an id, agreed by its members when it is made (0: the world);
//     a user's tag t (>= 0) travels as id * 2^32 + t, and the messages of collective number s of
//     the communicator's own schedules as -(1 + id * 2^32 + s mod 2^32). So no two communicators
//     of a pair of ranks, no collective and no user message ever match each other's messages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::runtime {

class MessageSpace {
 public:
  static constexpr std::int64_t kTagsPerSpace = std::int64_t{1} << 32;

  // The world: id 0, group ranks are world ranks.
  MessageSpace() = default;
  // A group: `world_of` its members' world ranks by group rank; `world_size` ranks in the world.
  MessageSpace(std::int64_t id, std::vector<int> world_of, int world_size);

  std::int64_t id() const { return id_; }
  // The group's ranks (0 for the world's space, whose size the communicator knows).
  int size() const { return static_cast<int>(world_of_.size()); }
  std::int64_t user_tag(int tag) const { return id_ * kTagsPerSpace + tag; }
  std::int64_t call_tag(std::uint64_t seq) const {
    return -1 - (id_ * kTagsPerSpace + static_cast<std::int64_t>(seq & 0xffffffffu));
  }
  // A group rank's world rank, and back (-1: not a member); kAnySource (-1) stays as it is.
  int world(int group_rank) const;
  int group(int world_rank) const;
  // By world rank, the group rank (-1: not a member); null for the world (the identity). Held
  // by a receive until it completes, to name its sender in the group's numbering.
  const std::shared_ptr<const std::vector<int>>& group_of() const { return group_of_; }

 private:
  std::int64_t id_ = 0;
  std::vector<int> world_of_;                         // empty: the identity
  std::shared_ptr<const std::vector<int>> group_of_;  // null: the identity
};

// The one way an error names rank `world_rank` of a communicator whose numbering is `group_of`
// (MessageSpace::group_of(): null for the world's): "rank 5" in the world, "group rank 1 (world
// rank 5)" in a group, so that a group's error names the rank as its calls do and as the
// launcher, the logs and the world's errors do. With `host`: "rank 5 (on node7)", "group rank 1
// (world rank 5, on node7)".
std::string rank_name(int world_rank, const std::vector<int>* group_of, std::string_view host = {});
// A rank's place in its communicator: "rank 0 of 4", "group rank 0 (world rank 1) of 2".
// `world_size`: the world's (a group's size is its members').
std::string rank_of(int world_rank, const std::vector<int>* group_of, int world_size);

}  // namespace dtrain::runtime
