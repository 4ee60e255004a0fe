#include "launch/rank_place.hpp"

#include <string>

namespace dtrain::launch {

Environment rank_place_environment(const RankPlace& place) {
  return {{"DTRAIN_RANK", std::to_string(place.rank)},
          {"DTRAIN_WORLD_SIZE", std::to_string(place.size)},
          {"DTRAIN_LOCAL_RANK", std::to_string(place.local_rank)},
          {"DTRAIN_LOCAL_SIZE", std::to_string(place.local_size)}};
}

}  // namespace dtrain::launch
