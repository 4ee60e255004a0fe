#include "comm/point_to_point/group_ids.hpp"

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

std::int64_t GroupIds::next() const {
  const std::lock_guard lock(mutex_);
  return next_;
}

void GroupIds::agreed(std::int64_t id, const std::string& op) {
  if (id >= kNumberedBase) {
    throw Error(Error::Code::kInvalid,
                "dtrain: " + op + ": this Context has made " + std::to_string(kNumberedBase - 1) +
                    " groups by split or subgroup, the most it can; expected fewer (a group "
                    "given a number takes none of them)");
  }
  const std::lock_guard lock(mutex_);
  if (id >= next_) next_ = id + 1;
}

void GroupIds::check_number(std::int64_t number, const std::string& op) {
  if (number < 0 || number > kMaxNumber) {
    throw Error(Error::Code::kInvalid, "dtrain: " + op + ": number; expected 0 to " +
                                           std::to_string(kMaxNumber) + ", got " +
                                           std::to_string(number));
  }
}

std::int64_t GroupIds::numbered(std::int64_t number, const std::string& op) {
  check_number(number, op);
  const std::lock_guard lock(mutex_);
  if (!given_.insert(number).second) {
    throw Error(Error::Code::kInvalid,
                "dtrain: " + op + ": number " + std::to_string(number) +
                    " was given to an earlier group of this Context; expected a number given to "
                    "no other group (the same on every member, as torch's new_group count is)");
  }
  return kNumberedBase + number;
}

}  // namespace dtrain::runtime
