// The in-process store: a map under a mutex, for one rank or for threads in one test.
#include <condition_variable>
#include <map>
#include <mutex>

#include "bootstrap/store.hpp"
#include "bootstrap/store_errors.hpp"

namespace dtrain::runtime {
namespace {

class MemoryStore final : public Store {
 public:
  void set(const std::string& key, const std::string& value) override {
    {
      std::lock_guard lock(mutex_);
      table_[key] = value;
    }
    changed_.notify_all();
  }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    const bool all = changed_.wait_for(lock, timeout, [&] {
      for (const auto& k : keys)
        if (!table_.contains(k)) return false;
      return true;
    });
    if (!all) {
      std::vector<std::string> missing;
      for (const auto& k : keys)
        if (!table_.contains(k)) missing.push_back(k);
      throw_store_timeout(method(), missing, timeout);
    }
  }
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    wait({key}, timeout);
    std::lock_guard lock(mutex_);
    return table_.at(key);
  }
  std::string_view method() const override { return "memory"; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> table_;
};

}  // namespace

std::shared_ptr<Store> make_memory_store() { return std::make_shared<MemoryStore>(); }

}  // namespace dtrain::runtime
