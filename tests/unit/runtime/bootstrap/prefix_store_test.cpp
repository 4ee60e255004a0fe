// PrefixStore over the in-memory store: keys land under "prefix/", and a timeout names the keys
// as the caller wrote them (Context::store_get relies on it for the user's keys).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "bootstrap/store.hpp"
#include "dtrain/dtrain.hpp"

namespace {

using namespace std::chrono_literals;

TEST(PrefixStore, KeysLiveUnderThePrefix) {
  auto inner = dtrain::runtime::make_memory_store();
  dtrain::runtime::PrefixStore user(inner, "user");
  dtrain::runtime::PrefixStore tcp(inner, "tcp");
  user.set("run", "abc");
  tcp.set("run", "xyz");
  EXPECT_EQ(inner->get("user/run", 1s), "abc");
  EXPECT_EQ(user.get("run", 1s), "abc");
  EXPECT_EQ(tcp.get("run", 1s), "xyz");
  user.wait({"run"}, 1s);
  EXPECT_EQ(user.method(), "memory");
}

TEST(PrefixStore, ATimeoutNamesTheKeysWithoutThePrefix) {
  auto inner = dtrain::runtime::make_memory_store();
  dtrain::runtime::PrefixStore user(inner, "user");
  user.set("there", "1");
  const std::string tail =
      " not set within 0.05 s (DTRAIN_TIMEOUT); expected every rank to publish them (a rank that "
      "never started or died?)";
  try {
    user.wait({"there", "user/a", "b"}, 50ms);
    FAIL() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kTimeout);
    EXPECT_EQ(std::string(e.what()), "dtrain: store: memory: wait: keys \"user/a\", \"b\"" + tail);
  }
  try {
    user.get("missing", 50ms);
    FAIL() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()), "dtrain: store: memory: wait: keys \"missing\"" + tail);
  }
}

}  // namespace
