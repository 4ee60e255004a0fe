// The in-process store (memory_store.cpp): set, get, wait, and a timeout that names the keys
// still missing. Timeouts are short and only the message is checked, never how long it took.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "bootstrap/store.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace {

using namespace std::chrono_literals;

const std::string kTail =
    " not set within 0.01 s (DTRAIN_TIMEOUT); expected every rank to publish them (a rank that "
    "never started or died?)";

TEST(MemoryStore, GetsWhatWasSetAndTheLatestValue) {
  auto store = make_memory_store();
  EXPECT_EQ(store->method(), "memory");
  store->set("a", "1");
  store->set("b", std::string("x\0y", 3));
  EXPECT_EQ(store->get("a", 1s), "1");
  EXPECT_EQ(store->get("b", 1s), std::string("x\0y", 3));
  store->set("a", "2");
  EXPECT_EQ(store->get("a", 1s), "2");
  store->wait({"a", "b"}, 1s);
  store->wait({}, 0ms);
}

TEST(MemoryStore, AWaitEndsWhenAnotherThreadSetsTheKey) {
  auto store = make_memory_store();
  std::thread setter([&] { store->set("late", "here"); });
  EXPECT_EQ(store->get("late", 60s), "here");
  setter.join();
}

TEST(MemoryStore, AWaitTimeoutNamesOnlyTheMissingKeys) {
  auto store = make_memory_store();
  store->set("there", "1");
  try {
    store->wait({"a", "there", "b"}, 10ms);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kTimeout);
    EXPECT_EQ(std::string(e.what()), "dtrain: store: memory: wait: keys \"a\", \"b\"" + kTail);
  }
}

TEST(MemoryStore, AGetTimeoutNamesTheKey) {
  auto store = make_memory_store();
  try {
    store->get("missing", 10ms);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kTimeout);
    EXPECT_EQ(std::string(e.what()), "dtrain: store: memory: wait: keys \"missing\"" + kTail);
  }
}

}  // namespace
}  // namespace dtrain::runtime
