#include "affinity/cpuset.hpp"

#include <algorithm>
#include <bit>
#include <charconv>

#include "affinity/errors.hpp"

namespace dtrain::affinity {
namespace {

constexpr int kBits = 64;
// No machine has a million PUs; the bound keeps a typo such as "0-99999999" from allocating
// gigabytes before anyone notices.
constexpr int kMaxCpu = 1 << 20;

[[noreturn]] void malformed(std::string_view what, std::string_view text) {
  throw PolicyError("dtrain: cpuset: " + std::string(what) +
                    ": expected a list such as 0-3,8 (indices below " + std::to_string(kMaxCpu) +
                    "), got \"" + std::string(text) + "\"");
}

int parse_index(std::string_view item, std::string_view what, std::string_view text) {
  int value = 0;
  const char* end = item.data() + item.size();
  auto [ptr, ec] = std::from_chars(item.data(), end, value);
  if (item.empty() || ec != std::errc() || ptr != end || value < 0 || value >= kMaxCpu) {
    malformed(what, text);
  }
  return value;
}

}  // namespace

CpuSet::CpuSet(std::initializer_list<int> cpus) {
  for (int c : cpus) add(c);
}

CpuSet CpuSet::parse(std::string_view text, std::string_view what) {
  CpuSet out;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty() || (comma != std::string_view::npos && rest.empty())) malformed(what, text);
    const auto dash = item.find('-');
    if (dash == std::string_view::npos) {
      out.add(parse_index(item, what, text));
      continue;
    }
    const int first = parse_index(item.substr(0, dash), what, text);
    const int last = parse_index(item.substr(dash + 1), what, text);
    if (last < first) malformed(what, text);
    out |= range(first, last);
  }
  return out;
}

CpuSet CpuSet::range(int first, int last) {
  CpuSet out;
  for (int c = first; c <= last; ++c) out.add(c);
  return out;
}

void CpuSet::add(int cpu) {
  if (cpu < 0) return;
  const auto word = static_cast<std::size_t>(cpu / kBits);
  if (words_.size() <= word) words_.resize(word + 1, 0);
  words_[word] |= std::uint64_t{1} << (cpu % kBits);
}

void CpuSet::remove(int cpu) {
  if (!contains(cpu)) return;
  words_[static_cast<std::size_t>(cpu / kBits)] &= ~(std::uint64_t{1} << (cpu % kBits));
  trim();
}

bool CpuSet::contains(int cpu) const {
  if (cpu < 0) return false;
  const auto word = static_cast<std::size_t>(cpu / kBits);
  return word < words_.size() && ((words_[word] >> (cpu % kBits)) & 1U) != 0;
}

bool CpuSet::empty() const { return words_.empty(); }

int CpuSet::count() const {
  int n = 0;
  for (auto w : words_) n += std::popcount(w);
  return n;
}

int CpuSet::first() const {
  for (std::size_t i = 0; i < words_.size(); ++i) {
    if (words_[i] != 0) return static_cast<int>(i) * kBits + std::countr_zero(words_[i]);
  }
  return -1;
}

int CpuSet::last() const {
  if (words_.empty()) return -1;
  const std::size_t i = words_.size() - 1;
  return static_cast<int>(i) * kBits + (kBits - 1 - std::countl_zero(words_[i]));
}

bool CpuSet::intersects(const CpuSet& other) const {
  const std::size_t n = std::min(words_.size(), other.words_.size());
  for (std::size_t i = 0; i < n; ++i) {
    if ((words_[i] & other.words_[i]) != 0) return true;
  }
  return false;
}

bool CpuSet::is_subset_of(const CpuSet& other) const { return (*this - other).empty(); }

CpuSet CpuSet::operator&(const CpuSet& other) const {
  CpuSet out;
  out.words_.resize(std::min(words_.size(), other.words_.size()));
  for (std::size_t i = 0; i < out.words_.size(); ++i) out.words_[i] = words_[i] & other.words_[i];
  out.trim();
  return out;
}

CpuSet CpuSet::operator|(const CpuSet& other) const {
  CpuSet out = *this;
  out |= other;
  return out;
}

CpuSet& CpuSet::operator|=(const CpuSet& other) {
  if (words_.size() < other.words_.size()) words_.resize(other.words_.size(), 0);
  for (std::size_t i = 0; i < other.words_.size(); ++i) words_[i] |= other.words_[i];
  return *this;
}

CpuSet CpuSet::operator-(const CpuSet& other) const {
  CpuSet out = *this;
  const std::size_t n = std::min(out.words_.size(), other.words_.size());
  for (std::size_t i = 0; i < n; ++i) out.words_[i] &= ~other.words_[i];
  out.trim();
  return out;
}

bool CpuSet::operator==(const CpuSet& other) const { return words_ == other.words_; }

std::vector<int> CpuSet::to_vector() const {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(count()));
  for (std::size_t i = 0; i < words_.size(); ++i) {
    std::uint64_t w = words_[i];
    while (w != 0) {
      out.push_back(static_cast<int>(i) * kBits + std::countr_zero(w));
      w &= w - 1;
    }
  }
  return out;
}

std::string CpuSet::to_list() const { return format_ranges(to_vector()); }

std::string format_ranges(std::vector<int> numbers) {
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  std::string out;
  for (std::size_t i = 0; i < numbers.size();) {
    std::size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(numbers[i]);
    if (j > i) out += '-' + std::to_string(numbers[j]);
    i = j + 1;
  }
  return out;
}

void CpuSet::trim() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

}  // namespace dtrain::affinity
