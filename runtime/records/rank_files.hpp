// The names of a rank's files in a run directory: rank-NNNNN.log (its output, written by
// `dtrain run-rank` or the SPANK plugin) and rank-NNNNN.jsonl (its metric records, written by
// libdtrain's Meter). Every writer and reader of a run directory names them through here, so the
// zero padding cannot drift between them. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "records/run_dir_layout.hpp"  // kLogExtension, kMetricsExtension

namespace dtrain::records {

// "rank-00042.log" / "rank-00042.jsonl"; ranks past 99999 take more digits.
std::string rank_file_name(int rank, std::string_view extension);

// The names of all ranks' files, as messages say them: "rank-NNNNN.log".
std::string rank_file_pattern(std::string_view extension);

// "rank-00042.log" -> 42 for extension "log"; nothing for any other name, also one that
// rank_file_name would not write for its rank ("rank-000042.log", "rank-012345.log").
std::optional<int> parse_rank_file_name(std::string_view name, std::string_view extension);

}  // namespace dtrain::records
