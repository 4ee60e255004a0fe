// Which of a merge's inputs hold an open file when the process may not open them all at once
// (`ulimit -n` below the number of rank logs): at most `capacity` do, and the one read longest ago
// gives its descriptor up for the next. Pure bookkeeping over input indexes; the caller opens and
// closes (cli/file_pool.hpp).
#pragma once

#include <cstddef>
#include <list>
#include <optional>
#include <vector>

namespace dtrain::report {

class DescriptorLru {
 public:
  // Throws std::invalid_argument when `capacity` is 0.
  explicit DescriptorLru(std::size_t capacity);

  struct Use {
    bool open = false;                   // `input` holds no descriptor yet: open one now
    std::optional<std::size_t> release;  // close this input's descriptor first
  };
  // `input` is about to read: it becomes the most recently used, and holds a descriptor from now
  // on. Inputs are small indexes (the merge's), added in any order.
  Use use(std::size_t input);

  // An open failed because the process ran out of descriptors (EMFILE: other code holds some,
  // or the limit was lower than thought). Call forget() for the input that failed first. The
  // least recently used input gives its descriptor up for the open to be retried, and the
  // capacity becomes what was held, so the pool stays within what the process could open; none
  // when nothing is held (then nothing can be opened, and the caller says so).
  std::optional<std::size_t> shrink();

  // `input` holds no descriptor (its open failed, or it was closed for good).
  void forget(std::size_t input);

  bool holds(std::size_t input) const { return input < where_.size() && where_[input].has_value(); }
  std::size_t held() const { return order_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::list<std::size_t> order_;  // most recently used first
  std::vector<std::optional<std::list<std::size_t>::iterator>> where_;
};

}  // namespace dtrain::report
