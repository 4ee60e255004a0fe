// Numbers as people write them in variables (DTRAIN_TIMEOUT=30, DTRAIN_ATTEMPT=2, RANK=0,
// SLURM_NODEID=3): the one parser of every DTRAIN_* and launcher variable. strtol and strtod skip
// leading white space and take a sign, hexadecimal ("0x10"), hexadecimal floats ("0x1p3"), "inf"
// and "nan", so " 5", "\t5" and "0x10" were accepted as numbers nobody meant; these take plain
// decimal text only. Each caller names its own variable and range in its message (as with
// parse_switch), so the refusals read alike whatever the variable.
#pragma once

#include <optional>
#include <string_view>

namespace dtrain {

// A whole number of ASCII decimal digits only (no sign, no space, no "0x"), from `min` to `max`
// (min >= 0); nothing for anything else, an empty text or a value past `max` (however many
// digits: no overflow).
std::optional<long long> parse_whole_number(std::string_view text, long long min, long long max);

// A decimal number: digits with an optional fraction ("30", "0.5", "5.", ".5") and an optional
// exponent ("1e7", "2.5E-3"); no sign, space, hexadecimal, "inf" or "nan". Nothing unless it lies
// from `min` to `max`.
std::optional<double> parse_decimal_number(std::string_view text, double min, double max);

}  // namespace dtrain
