#include "common/errors.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <type_traits>

namespace dtrain {
namespace {

// Two categories, neither a kind of the other: an adapter decides by catching one of them.
TEST(ErrorRoot, TwoDisjointCategories) {
  static_assert(std::is_base_of_v<std::runtime_error, InputError>);
  static_assert(std::is_base_of_v<std::runtime_error, Failure>);
  static_assert(!std::is_base_of_v<InputError, Failure>);
  static_assert(!std::is_base_of_v<Failure, InputError>);
  static_assert(std::is_base_of_v<InputError, UsageError>);
  try {
    throw UsageError("dtrain: logs: --rank: expected ranks such as 3 or 0-3,7, got \"x\"");
  } catch (const Failure&) {
    FAIL() << "a usage error is not a failure";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "dtrain: logs: --rank: expected ranks such as 3 or 0-3,7, got \"x\"");
  }
}

}  // namespace
}  // namespace dtrain
