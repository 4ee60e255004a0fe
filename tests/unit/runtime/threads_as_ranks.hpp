// Runs `body(rank)` on `size` threads, one per pretend rank (gloo's BaseTest::spawn), and rethrows
// the first rank's failure, so multi-rank logic is tested without mpirun.
#pragma once

#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace dtrain::test {

inline void threads_as_ranks(int size, const std::function<void(int rank)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace dtrain::test
