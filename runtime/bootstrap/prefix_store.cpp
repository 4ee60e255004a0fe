// PrefixStore (store.hpp), and Store::get_many's one-key-at-a-time default.
#include "bootstrap/store.hpp"
#include "bootstrap/store_errors.hpp"

namespace dtrain::runtime {
namespace {

// The inner store's timeout again, with every missing key (all of them the caller's, so all
// prefixed) named as the caller wrote it.
[[noreturn]] void throw_unprefixed(const StoreTimeout& e, const std::string& prefix) {
  std::vector<std::string> missing;
  for (const auto& k : e.missing()) {
    missing.push_back(k.rfind(prefix, 0) == 0 ? k.substr(prefix.size()) : k);
  }
  throw StoreTimeout(e.method(), std::move(missing), e.timeout());
}

}  // namespace

void PrefixStore::set(const std::string& key, const std::string& value) {
  inner_->set(prefix_ + key, value);
}

void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(prefix_ + k);
  try {
    inner_->wait(full, timeout);
  } catch (const StoreTimeout& e) {
    throw_unprefixed(e, prefix_);
  }
}

std::string PrefixStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  try {
    return inner_->get(prefix_ + key, timeout);
  } catch (const StoreTimeout& e) {
    throw_unprefixed(e, prefix_);
  }
}

std::vector<std::string> PrefixStore::get_many(const std::vector<std::string>& keys,
                                               std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(prefix_ + k);
  try {
    return inner_->get_many(full, timeout);
  } catch (const StoreTimeout& e) {
    throw_unprefixed(e, prefix_);
  }
}

std::optional<std::vector<std::string>> PrefixStore::gather_at_fence(
    const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(prefix_ + k);
  try {
    return inner_->gather_at_fence(full, timeout);
  } catch (const StoreTimeout& e) {
    throw_unprefixed(e, prefix_);
  }
}

std::vector<std::string> Store::get_many(const std::vector<std::string>& keys,
                                         std::chrono::milliseconds timeout) {
  wait(keys, timeout);
  std::vector<std::string> values;
  values.reserve(keys.size());
  for (const auto& k : keys) values.push_back(get(k, timeout));
  return values;
}

}  // namespace dtrain::runtime
