// Golden files (hwloc's test-hwloc-calc pattern) for the plan tests: DTRAIN_UPDATE_GOLDEN=1
// rewrites them, and the diff is then reviewed like any other change.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace dtrain::plan::testing {

inline std::string read(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void expect_golden(const std::string& path, const std::string& actual) {
  const char* update = std::getenv("DTRAIN_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << actual;
    return;
  }
  EXPECT_EQ(read(path), actual) << "golden file " << path
                                << " differs; rerun with DTRAIN_UPDATE_GOLDEN=1 to update it";
}

}  // namespace dtrain::plan::testing
