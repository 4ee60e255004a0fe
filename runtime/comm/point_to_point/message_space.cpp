#include "comm/point_to_point/message_space.hpp"

#include <utility>

namespace dtrain::runtime {

MessageSpace::MessageSpace(std::int64_t id, std::vector<int> world_of, int world_size)
    : id_(id), world_of_(std::move(world_of)) {
  auto group_of = std::make_shared<std::vector<int>>(static_cast<std::size_t>(world_size), -1);
  for (std::size_t g = 0; g < world_of_.size(); ++g) {
    (*group_of)[static_cast<std::size_t>(world_of_[g])] = static_cast<int>(g);
  }
  group_of_ = std::move(group_of);
}

int MessageSpace::world(int group_rank) const {
  if (group_rank < 0 || world_of_.empty()) return group_rank;
  return world_of_[static_cast<std::size_t>(group_rank)];
}

int MessageSpace::group(int world_rank) const {
  if (world_rank < 0 || !group_of_) return world_rank;
  return (*group_of_)[static_cast<std::size_t>(world_rank)];
}

}  // namespace dtrain::runtime
