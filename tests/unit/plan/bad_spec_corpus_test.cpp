// Every file in tests/fixtures/specs/bad/ with the exact message it produces (NAME.expected beside
// NAME.yaml). DTRAIN_UPDATE_GOLDEN=1 writes the .expected files for review.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::plan {
namespace {
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BadSpecCorpus, EachFileGivesItsExactMessage) {
  const fs::path dir = DTRAIN_FIXTURE_DIR "/specs/bad";
  const char* update = std::getenv("DTRAIN_UPDATE_GOLDEN");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    std::string message = "(no error)";
    try {
      parse_job_spec(slurp(entry.path()), name);
    } catch (const SpecError& e) {
      message = e.what();
    }
    fs::path expected_path = entry.path();
    expected_path.replace_extension(".expected");
    if (update != nullptr && std::string(update) == "1") {
      std::ofstream(expected_path) << message << "\n";
      continue;
    }
    EXPECT_EQ(slurp(expected_path), message + "\n") << name;
    EXPECT_NE(message, "(no error)") << name << " was accepted";
  }
  EXPECT_GE(files, 20);
}

}  // namespace
}  // namespace dtrain::plan
