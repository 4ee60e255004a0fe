// The ranks' collective waits their loggers published (RUN_DIR/arrivals/, arrival_watch.hpp) and
// their straggler verdict, for `dtrain stats`, the report and rank 0's live line: run_dir.hpp's
// readers of arrivals/, apart from the metric and log readers.
#include <filesystem>
#include <map>

#include "common/input_file.hpp"
#include "records/rank_files.hpp"
#include "records/run_dir_layout.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace fs = std::filesystem;

std::vector<report::RankArrivals> read_rank_arrivals(const std::string& run_dir) {
  // A window of 200 waits is about 1.5 KB of text; a file holds a few.
  constexpr std::size_t kMaxArrivalsBytes = std::size_t{1} << 20;
  std::map<int, report::RankArrivals> by_rank;
  const fs::path dir = fs::path(run_dir) / records::kArrivalsDir;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto rank = records::parse_rank_file_name(it->path().filename().string(), "txt");
    if (!rank) continue;
    try {
      const auto text = read_input_file_if_present(it->path().string(), "a rank's collective waits",
                                                   kMaxArrivalsBytes);
      if (!text) continue;
      auto a = report::parse_arrivals(*text);
      if (a && a->rank == *rank) by_rank[*rank] = std::move(*a);
    } catch (const std::exception&) {
      continue;  // evidence, not a record: one bad file leaves the others' verdict standing
    }
  }
  std::vector<report::RankArrivals> out;
  for (auto& [rank, a] : by_rank) out.push_back(std::move(a));
  return out;
}

std::optional<std::pair<report::ArrivalVerdict, std::size_t>> judge_rank_arrivals(
    const std::vector<report::RankArrivals>& arrivals, double straggler_threshold) {
  if (arrivals.size() < 2) return std::nullopt;
  auto verdict = report::judge_arrivals(arrivals, straggler_threshold);
  if (!verdict) return std::nullopt;
  return std::pair{std::move(*verdict), arrivals.size()};
}

std::optional<std::pair<report::ArrivalVerdict, std::size_t>> read_arrival_verdict(
    const std::string& run_dir, double straggler_threshold) {
  return judge_rank_arrivals(read_rank_arrivals(run_dir), straggler_threshold);
}

}  // namespace dtrain::cli
