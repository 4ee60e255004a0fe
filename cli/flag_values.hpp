// Flag values read by dtrain's own parsers rather than CLI11's: a number CLI11 cannot convert
// reaches the user as "Could not convert: --local-rank = a", and an empty --topology "" would
// silently mean "not given". These name the command, the flag, what was expected and what was
// given. A refusal is a CLI::ValidationError, so main() reports it as any other bad flag (exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace dtrain::cli {

// A whole number from `min` to `max` (min >= 0), written in decimal digits only: the one parser
// of the numbers dtrain reads (common/number_text.hpp). `store` gets the value.
CLI::Option* add_whole_number_flag(CLI::App& cmd, const std::string& name,
                                   std::function<void(long long)> store, long long min,
                                   long long max, const std::string& help);

template <typename T>
CLI::Option* add_whole_number_flag(CLI::App& cmd, const std::string& name, T& out, long long min,
                                   long long max, const std::string& help) {
  return add_whole_number_flag(
      cmd, name, [&out](long long v) { out = static_cast<T>(v); }, min, max, help);
}

// A decimal number ("0.5", "30", "1e-3") from `min` to `max`, digits only (no sign, space, "0x",
// "inf" or "nan"): common/number_text.hpp's parser. `store` gets the value.
CLI::Option* add_decimal_number_flag(CLI::App& cmd, const std::string& name, double& out,
                                     double min, double max, const std::string& help);

// A file path; an empty value is refused. `what` says what the file holds ("an hwloc XML file
// (lstopo --of xml)").
CLI::Option* add_file_flag(CLI::App& cmd, const std::string& name, std::string& out,
                           const std::string& what, const std::string& help);

// A bad command line as every dtrain message reads: CLI11's own text ("run_dir is required",
// "--output: At Most 1 required but received 2") after "dtrain: COMMAND: " and with where to look
// ("dtrain: report: run_dir is required; see dtrain report --help"); a message of dtrain's own
// flag parsers (already "dtrain: ...") as it is. `command`: the subcommand, "" before one.
std::string usage_error_text(const std::string& command, const std::string& cli_text);

// What `--topology` of `plan`, `topo` and `bind` names.
inline const std::string kTopologyFile = "an hwloc XML file (lstopo --of xml)";

}  // namespace dtrain::cli
