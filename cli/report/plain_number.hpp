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

}  // namespace dtrain::report
