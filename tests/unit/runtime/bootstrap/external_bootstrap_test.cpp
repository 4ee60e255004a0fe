// init(ExternalBootstrap): ranks as threads of this process, over a store the test shares between
// them (what dtrain.torch passes from torch's c10d::Store). Public API only.
#include <gtest/gtest.h>

#include "threads_as_ranks.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace {

// What a caller's store does: set, and a get that blocks until the key exists.
class SharedStore final : public dtrain::BootstrapStore {
 public:
  void set(const std::string& key, const std::string& value) override {
    {
      std::lock_guard lock(mutex_);
      table_[key] = value;
    }
    cv_.notify_all();
  }
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return table_.count(key) != 0; })) {
      throw std::runtime_error("test store: no key " + key);
    }
    return table_[key];
  }
  std::size_t keys() {
    std::lock_guard lock(mutex_);
    return table_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::string> table_;
};

std::string init_error(const dtrain::ExternalBootstrap& b) {
  try {
    dtrain::init(b);
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(ExternalBootstrap, RanksMeetThroughTheCallersStoreAndReduce) {
  auto store = std::make_shared<SharedStore>();
  dtrain::test::threads_as_ranks(3, [&](int rank) {
    dtrain::Context ctx = dtrain::init(dtrain::ExternalBootstrap{rank, 3, store});
    EXPECT_EQ(ctx.world().rank, rank);
    EXPECT_EQ(ctx.world().size, 3);
    EXPECT_EQ(ctx.world().bootstrap, "external");
    EXPECT_EQ(ctx.world().affinity.rfind("off: ", 0), 0u) << ctx.world().affinity;
    EXPECT_EQ(ctx.comm().backend(), "tcp");
    std::vector<float> v(1000, static_cast<float>(rank + 1));
    ctx.comm().allreduce(std::span<float>(v), dtrain::ReduceOp::kSum);
    EXPECT_EQ(v.front(), 6.0f);
    EXPECT_EQ(v.back(), 6.0f);
    ctx.comm().barrier();
  });
  EXPECT_GT(store->keys(), 0u);  // the addresses went through it
}

// torch makes one process group per new_group(), each with its own store prefix: Contexts of the
// same process live side by side.
TEST(ExternalBootstrap, SeveralContextsLiveInOneProcess) {
  auto world = std::make_shared<SharedStore>();
  auto pair = std::make_shared<SharedStore>();
  dtrain::test::threads_as_ranks(2, [&](int rank) {
    dtrain::Context a = dtrain::init(dtrain::ExternalBootstrap{rank, 2, world});
    dtrain::Context b = dtrain::init(dtrain::ExternalBootstrap{rank, 2, pair});
    std::vector<double> x{static_cast<double>(rank)};
    a.comm().allreduce(std::span<double>(x), dtrain::ReduceOp::kSum);
    b.comm().allreduce(std::span<double>(x), dtrain::ReduceOp::kSum);
    EXPECT_EQ(x[0], 2.0);
  });
}

TEST(ExternalBootstrap, OneRankNeedsNoStore) {
  dtrain::Context ctx = dtrain::init(dtrain::ExternalBootstrap{0, 1, nullptr});
  EXPECT_EQ(ctx.comm().backend(), "single");
}

TEST(ExternalBootstrap, BadPlacesAreRefusedNamingTheField) {
  auto store = std::make_shared<SharedStore>();
  EXPECT_EQ(init_error({2, 2, store}), "dtrain: bootstrap: external: rank; expected 0 to 1, got 2");
  EXPECT_EQ(init_error({0, 0, store}),
            "dtrain: bootstrap: external: size; expected at least 1, got 0");
  EXPECT_EQ(init_error({0, 2, nullptr}),
            "dtrain: bootstrap: external: store; expected the store the 2 ranks share, got none");
}

// The caller's timeout (torch's init_process_group(timeout=...)) is the deadline instead of
// DTRAIN_TIMEOUT: a peer that never publishes its address fails init() after it.
TEST(ExternalBootstrap, TheCallersTimeoutIsTheDeadline) {
  dtrain::ExternalBootstrap alone{1, 2, std::make_shared<SharedStore>(),
                                  std::chrono::milliseconds(300)};
  try {
    dtrain::init(alone);
    ADD_FAILURE() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kTimeout) << e.what();
    // Within a second (the table's get adds a grace to the timeout), not DTRAIN_TIMEOUT's 300 s.
    EXPECT_NE(std::string(e.what()).find(" not set within 0."), std::string::npos) << e.what();
  }
  auto store = std::make_shared<SharedStore>();
  EXPECT_EQ(init_error({0, 2, store, std::chrono::milliseconds(0)}),
            "dtrain: bootstrap: external: timeout; expected a positive duration, got 0 ms");
}

// A store that fails (torch's TCPStore server gone) fails init() with its own text.
TEST(ExternalBootstrap, TheStoresFailureKeepsItsText) {
  class Broken final : public dtrain::BootstrapStore {
   public:
    void set(const std::string&, const std::string&) override {}
    std::string get(const std::string&, std::chrono::milliseconds) override {
      throw std::runtime_error("Connection reset by peer");
    }
  };
  try {
    dtrain::init(dtrain::ExternalBootstrap{1, 2, std::make_shared<Broken>()});
    ADD_FAILURE() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Connection reset by peer"), std::string::npos)
        << e.what();
  }
}

}  // namespace
