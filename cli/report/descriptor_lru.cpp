#include "report/descriptor_lru.hpp"

#include <stdexcept>

namespace dtrain::report {

DescriptorLru::DescriptorLru(std::size_t capacity) : capacity_(capacity) {
  if (capacity == 0) {
    throw std::invalid_argument("DescriptorLru: expected a capacity >= 1, got 0");
  }
}

DescriptorLru::Use DescriptorLru::use(std::size_t input) {
  if (input >= where_.size()) where_.resize(input + 1);
  Use use;
  if (where_[input]) {
    order_.splice(order_.begin(), order_, *where_[input]);  // iterators stay valid
    return use;
  }
  use.open = true;
  if (order_.size() >= capacity_) {
    use.release = order_.back();
    forget(order_.back());
  }
  order_.push_front(input);
  where_[input] = order_.begin();
  return use;
}

std::optional<std::size_t> DescriptorLru::shrink() {
  if (order_.empty()) return std::nullopt;
  const std::size_t victim = order_.back();
  forget(victim);
  capacity_ = order_.size() + 1;  // what was held, the freed one included
  return victim;
}

void DescriptorLru::forget(std::size_t input) {
  if (!holds(input)) return;
  order_.erase(*where_[input]);
  where_[input].reset();
}

}  // namespace dtrain::report
