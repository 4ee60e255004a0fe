// Every file in tests/fixtures/specs/bad/ (and profiles/bad/) with the exact message it produces
// (NAME.expected beside NAME.yaml). DTRAIN_UPDATE_GOLDEN=1 writes the .expected files for review.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::plan {
namespace {
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `parse` on every NAME.yaml of `dir` and compares its message with NAME.expected; returns
// how many files there were.
int check_corpus(const fs::path& dir, void (*parse)(const std::string& text, const std::string&)) {
  const char* update = std::getenv("DTRAIN_UPDATE_GOLDEN");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    std::string message = "(no error)";
    try {
      parse(slurp(entry.path()), name);
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
  return files;
}

TEST(BadSpecCorpus, EachFileGivesItsExactMessage) {
  EXPECT_GE(check_corpus(DTRAIN_FIXTURE_DIR "/specs/bad",
                         [](const std::string& text, const std::string& name) {
                           parse_job_spec(text, name);
                         }),
            20);
}

// The same for site profiles (tests/fixtures/profiles/bad/), read by the same field readers.
TEST(BadProfileCorpus, EachFileGivesItsExactMessage) {
  EXPECT_GE(check_corpus(DTRAIN_FIXTURE_DIR "/profiles/bad",
                         [](const std::string& text, const std::string& name) {
                           parse_site_profile(text, name);
                         }),
            2);
}

}  // namespace
}  // namespace dtrain::plan
