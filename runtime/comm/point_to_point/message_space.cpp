#include "comm/point_to_point/message_space.hpp"

#include <algorithm>
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

std::string rank_name(int world_rank, const std::vector<int>* group_of, std::string_view host) {
  const std::string world = std::to_string(world_rank);
  const std::string on = host.empty() ? std::string() : "on " + std::string(host);
  if (group_of == nullptr) return "rank " + world + (on.empty() ? "" : " (" + on + ")");
  const auto w = static_cast<std::size_t>(world_rank);
  const int group = w < group_of->size() ? (*group_of)[w] : -1;
  return "group rank " + std::to_string(group) + " (world rank " + world +
         (on.empty() ? "" : ", " + on) + ")";
}

std::string rank_of(int world_rank, const std::vector<int>* group_of, int world_size) {
  const auto size = group_of == nullptr ? static_cast<std::ptrdiff_t>(world_size)
                                        : std::count_if(group_of->begin(), group_of->end(),
                                                        [](int g) { return g >= 0; });
  return rank_name(world_rank, group_of) + " of " + std::to_string(size);
}

}  // namespace dtrain::runtime
