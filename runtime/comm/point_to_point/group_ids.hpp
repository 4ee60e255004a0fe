// The ids of one Context's sub-communicators (message_space.hpp: an id is a communicator's part
// of every tag), shared by every communicator on its mailbox. Two kinds, in ranges of their own so
// that neither can take the other's:
//   - agreed: split() and a subgroup() given no number agree on the largest id their members
//     propose, each proposing the lowest its process has not used: 1, 2, ... (0 is the world's);
//   - numbered: a subgroup() given a number (torch's new_group count: the same on every member and
//     given to no other group) takes kNumberedBase + number and agrees on nothing, so making it
//     sends no message and waits for no rank.
// A tag holds an id below 2^31 (id * 2^32 + tag in 63 bits); the id 2^31 - 1 is the members'
// agreement's own (comm_groups.cpp).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>

namespace dtrain::runtime {

class GroupIds {
 public:
  static constexpr std::int64_t kNumberedBase = std::int64_t{1} << 30;
  static constexpr std::int64_t kMaxNumber = kNumberedBase - 2;

  // The lowest agreed id this process has not used: what its members propose.
  std::int64_t next() const;
  // The members agreed on `id` (>= every proposal): this process will not propose it again.
  // Throws once the agreed ids reach the numbered ones' range (2^30 groups made).
  void agreed(std::int64_t id, const std::string& op);
  // Throws naming `op` for a number out of range (0 to kMaxNumber).
  static void check_number(std::int64_t number, const std::string& op);
  // The id of the group given `number`. Throws naming `op` for a number out of range or one
  // already given to a group in this process: two groups sharing a number and two ranks would
  // take each other's messages, and every rank of both learns of it here.
  std::int64_t numbered(std::int64_t number, const std::string& op);

 private:
  mutable std::mutex mutex_;
  std::int64_t next_ = 1;                   // 0 is the world's
  std::unordered_set<std::int64_t> given_;  // numbers given: 8 bytes per group made
};

}  // namespace dtrain::runtime
