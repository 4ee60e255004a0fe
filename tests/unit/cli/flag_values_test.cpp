// Number flags read by dtrain's own parsers (cli/flag_values.hpp): the refusal names the command,
// the flag, the range and the value, where CLI11 said "Could not convert: --tail = x" (issue 33,
// item 15: doctor, logs, stats and report had kept CLI11's).
#include "flag_values.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace dtrain::cli {
namespace {

// Parses `args` for a command "stats" with --tail (whole) and --threshold (decimal); returns the
// refusal's text, "" when accepted.
std::string parse(std::vector<std::string> args, long long& tail, double& threshold) {
  CLI::App app("dtrain");
  CLI::App* cmd = app.add_subcommand("stats");
  add_whole_number_flag(*cmd, "--tail", tail, 1, 1000, "lines");
  add_decimal_number_flag(*cmd, "--threshold", threshold, 1e-6, 1e6, "fraction");
  args.insert(args.begin(), "stats");
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(FlagValues, DecimalAndWholeNumbersAreDtrainsToRead) {
  long long tail = -1;
  double threshold = 0.1;
  EXPECT_EQ(parse({"--tail", "20", "--threshold", "0.25"}, tail, threshold), "");
  EXPECT_EQ(tail, 20);
  EXPECT_DOUBLE_EQ(threshold, 0.25);
  EXPECT_EQ(parse({"--threshold", "abc"}, tail, threshold),
            "dtrain: stats: --threshold: expected a decimal number from 0.000001 to 1000000, got "
            "\"abc\"");
  for (const char* bad : {"0", "-1", "0x10", " 5", "inf", "nan", ""}) {
    EXPECT_NE(parse({"--threshold", bad}, tail, threshold), "") << "accepted \"" << bad << "\"";
  }
  EXPECT_EQ(parse({"--tail", "x"}, tail, threshold),
            "dtrain: stats: --tail: expected an integer from 1 to 1000, got \"x\"");
  EXPECT_DOUBLE_EQ(threshold, 0.25);  // nothing stored by a refusal
}

// Issue 45 item 8: CLI11's own text reached the user raw ("run_dir is required\nRun with --help
// for more information."): it reads as every dtrain message, naming the command.
TEST(UsageErrorText, CliElevensTextNamesTheCommandAndWhereToLook) {
  EXPECT_EQ(usage_error_text("report", "run_dir is required"),
            "dtrain: report: run_dir is required; see dtrain report --help");
  EXPECT_EQ(usage_error_text("report", "--output: At Most 1 required but received 2"),
            "dtrain: report: --output: At Most 1 required but received 2; see dtrain report "
            "--help");
  EXPECT_EQ(usage_error_text("", "A subcommand is required"),
            "dtrain: A subcommand is required; see dtrain --help");
  // dtrain's own flag parsers already speak so.
  EXPECT_EQ(usage_error_text("supervise", "dtrain: supervise: --restarts: expected x, got \"a\""),
            "dtrain: supervise: --restarts: expected x, got \"a\"");
}

}  // namespace
}  // namespace dtrain::cli
