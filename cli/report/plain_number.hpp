// Numbers in reports as people read them: plain decimals, never an exponent. `dtrain stats` printed
// rates with "%.4g", so one table mixed `8300`, `1.009e+04` and `5.62e+04`, and the plot's axis
// read `1e+04`. The stats table, the scaling table and both plots format every number a person
// reads through this one function, so they agree. Pure.
#pragma once

#include <string>

namespace dtrain::report {

// Whole numbers from 100 up ("10093", "56200"), one decimal from 10 ("12.3"), two from 1
// ("1.23"), three significant digits below 1 ("0.0123"), trailing zeros dropped ("90", "0.5");
// "0" for zero and anything that rounds to zero at nine decimals, "-" for NaN and infinities.
std::string plain_number(double value);

// A share (0.25) as a percentage in plain numbers: "25 %".
std::string percent_text(double share);

// A duration as people read it, in plain numbers: "1.23 s", "12.3 ms", "450 us"; from a minute
// "2 min 5 s", from an hour "1 h 5 min". The stats table's stragglers and the report page use it.
std::string duration_text(double seconds);

// A size in bytes in binary units, in plain numbers: "512 B", "4 KiB", "1.5 GiB" (the report
// page's collectives, checkpoints and memory, and the collective its ranks are stuck in).
std::string bytes_text(double bytes);

}  // namespace dtrain::report
