#include "records/rank_files.hpp"

#include <charconv>
#include <cstdio>

namespace dtrain::records {

std::string rank_file_name(int rank, std::string_view extension) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%05d", rank);
  return std::string(kRankFilePrefix) + digits + "." + std::string(extension);
}

std::string rank_file_pattern(std::string_view extension) {
  return std::string(kRankFilePrefix) + "NNNNN." + std::string(extension);
}

std::optional<int> parse_rank_file_name(std::string_view name, std::string_view extension) {
  if (name.size() < kRankFilePrefix.size() + 5 + 1 + extension.size() ||
      name.substr(0, kRankFilePrefix.size()) != kRankFilePrefix ||
      name.substr(name.size() - extension.size()) != extension ||
      name[name.size() - extension.size() - 1] != '.') {
    return std::nullopt;
  }
  const char* first = name.data() + kRankFilePrefix.size();
  const char* last = name.data() + name.size() - extension.size() - 1;
  int rank = 0;
  const auto [end, ec] = std::from_chars(first, last, rank);
  if (ec != std::errc() || end != last || rank < 0) return std::nullopt;
  // Only the name the writers give the rank: rank-000001.log beside rank-00001.log (a copy, an
  // editor's backup) is no second file of rank 1, which every reader would count as another rank.
  if (rank_file_name(rank, extension) != name) return std::nullopt;
  return rank;
}

}  // namespace dtrain::records
