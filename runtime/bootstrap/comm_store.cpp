// The collective store over a communicator (the MPI store): set() buffers locally; wait() sends
// every rank's buffered pairs to every rank with two allgathers (sizes, then the padded blobs).
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>

#include "bootstrap/store.hpp"
#include "bootstrap/store_errors.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace {

void put_entry_string(std::string& out, const std::string& s) {
  const auto len = static_cast<std::uint64_t>(s.size());
  out.append(reinterpret_cast<const char*>(&len), sizeof len);
  out += s;
}

std::string take_entry_string(const char*& p) {
  std::uint64_t len = 0;
  std::memcpy(&len, p, sizeof len);
  p += sizeof len;
  std::string s(p, len);
  p += len;
  return s;
}

class CommStore final : public Store {
 public:
  CommStore(AllgatherBytes allgather, int size, std::string method)
      : allgather_(std::move(allgather)), size_(size), method_(std::move(method)) {}

  void set(const std::string& key, const std::string& value) override {
    pending_[key] = value;
    table_[key] = value;
  }

  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    exchange();
    std::vector<std::string> missing;
    for (const auto& k : keys)
      if (!table_.contains(k)) missing.push_back(k);
    if (!missing.empty()) throw_store_timeout(method_, missing, timeout);
  }

  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    wait({key}, timeout);
    return table_.at(key);
  }
  std::string_view method() const override { return method_; }

 private:
  void exchange() {
    std::string mine;
    for (const auto& [k, v] : pending_) {
      put_entry_string(mine, k);
      put_entry_string(mine, v);
    }
    pending_.clear();
    const auto n = static_cast<std::uint64_t>(mine.size());
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size_));
    allgather_(&n, sizes.data(), sizeof n);
    std::uint64_t most = 0;
    for (std::uint64_t s : sizes) most = std::max(most, s);
    if (most == 0) return;
    mine.resize(most);
    std::string all(most * static_cast<std::size_t>(size_), '\0');
    allgather_(mine.data(), all.data(), most);
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      const char* p = all.data() + r * most;
      const char* end = p + sizes[r];
      while (p < end) {
        std::string k = take_entry_string(p);
        table_[std::move(k)] = take_entry_string(p);
      }
    }
  }

  AllgatherBytes allgather_;
  int size_;
  std::string method_;
  std::map<std::string, std::string> pending_;
  std::map<std::string, std::string> table_;
};

}  // namespace

std::shared_ptr<Store> make_comm_store(AllgatherBytes allgather, int size, std::string method) {
  return std::make_shared<CommStore>(std::move(allgather), size, std::move(method));
}

}  // namespace dtrain::runtime
