#include "affinity/policy.hpp"

#include <array>
#include <utility>

#include "affinity/errors.hpp"
#include "common/words.hpp"

namespace dtrain::affinity {
namespace {

template <typename Enum, std::size_t N>
using Table = std::array<std::pair<std::string_view, Enum>, N>;

constexpr Table<GpuPolicy, 3> kGpu{{{"closest", GpuPolicy::kClosest},
                                    {"identity", GpuPolicy::kIdentity},
                                    {"none", GpuPolicy::kNone}}};
constexpr Table<GpuVisibility, 2> kVisibility{
    {{"own", GpuVisibility::kOwn}, {"own-first", GpuVisibility::kOwnFirst}}};
constexpr Table<CpuPolicy, 2> kCpu{{{"numa", CpuPolicy::kNuma}, {"none", CpuPolicy::kNone}}};
constexpr Table<NicPolicy, 3> kNic{
    {{"closest", NicPolicy::kClosest}, {"all", NicPolicy::kAll}, {"none", NicPolicy::kNone}}};

template <typename Enum, std::size_t N>
std::vector<std::string_view> names_of(const Table<Enum, N>& table) {
  std::vector<std::string_view> out;
  for (const auto& [name, value] : table) out.push_back(name);
  return out;
}

template <typename Enum, std::size_t N>
Enum parse(const Table<Enum, N>& table, std::string_view text, std::string_view what) {
  for (const auto& [name, value] : table) {
    if (name == text) return value;
  }
  throw PolicyError("dtrain: affinity: " + std::string(what) + ": unknown policy \"" +
                    std::string(text) + "\"; expected " + join_alternatives(names_of(table)) +
                    ", got \"" + std::string(text) + "\"");
}

template <typename Enum, std::size_t N>
std::string_view name_of(const Table<Enum, N>& table, Enum value) {
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return "?";
}

}  // namespace

GpuPolicy parse_gpu_policy(std::string_view text, std::string_view what) {
  return parse(kGpu, text, what);
}
GpuVisibility parse_gpu_visibility(std::string_view text, std::string_view what) {
  return parse(kVisibility, text, what);
}
CpuPolicy parse_cpu_policy(std::string_view text, std::string_view what) {
  return parse(kCpu, text, what);
}
NicPolicy parse_nic_policy(std::string_view text, std::string_view what) {
  return parse(kNic, text, what);
}

std::string_view to_string(GpuPolicy p) { return name_of(kGpu, p); }
std::string_view to_string(GpuVisibility v) { return name_of(kVisibility, v); }
std::string_view to_string(CpuPolicy p) { return name_of(kCpu, p); }
std::string_view to_string(NicPolicy p) { return name_of(kNic, p); }

const std::vector<std::string_view>& gpu_policy_names() {
  static const auto names = names_of(kGpu);
  return names;
}
const std::vector<std::string_view>& gpu_visibility_names() {
  static const auto names = names_of(kVisibility);
  return names;
}
const std::vector<std::string_view>& cpu_policy_names() {
  static const auto names = names_of(kCpu);
  return names;
}
const std::vector<std::string_view>& nic_policy_names() {
  static const auto names = names_of(kNic);
  return names;
}

}  // namespace dtrain::affinity
