// The YAML shape check: aliases counted expanded (a billion laughs refused at once, naming the
// line), one document only, ordinary specs untouched.
#include "plan/yaml_expansion.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>

namespace {

using dtrain::plan::check_yaml_shape;

// Ten levels of ten aliases each: 10^10 nodes expanded, in about 600 bytes.
std::string billion_laughs() {
  std::string text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p;
    for (int k = 1; k < 10; ++k) text += ", " + p;
    text += "]\n";
  }
  return text;
}

TEST(YamlExpansion, ABillionLaughsIsRefusedAtOnceNamingItsLine) {
  const std::string text = billion_laughs();
  ASSERT_LT(text.size(), 700u);
  const auto began = std::chrono::steady_clock::now();
  const auto problem = check_yaml_shape(text);
  const auto took = std::chrono::steady_clock::now() - began;
  ASSERT_TRUE(problem);
  // a0..a3 hold 10^4 nodes, a4 10^5: the limit is crossed inside line 5.
  EXPECT_EQ(problem->line, 5);
  EXPECT_EQ(problem->what,
            "expected at most 100000 nodes with aliases (*name) expanded, got more: anchors "
            "(&name) used inside each other multiply the text");
  EXPECT_LT(took, std::chrono::seconds(1));
}

TEST(YamlExpansion, ASecondDocumentIsRefusedNamingItsLine) {
  const auto problem = check_yaml_shape("name: a\nranks: 2\n---\nname: b\n");
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->line, 3);
  EXPECT_EQ(problem->what,
            "expected one YAML document, got a second one (a \"---\" line starts it): put "
            "everything in one document");
}

// yaml-cpp resolves `*a` inside `&a [...]` to the node being built: a cycle every walk of the tree
// followed until the stack overflowed (found by spec_parser_fuzz).
TEST(YamlExpansion, AnAliasInsideItsOwnAnchorIsRefusedNamingItsLine) {
  const std::pair<const char*, int> cases[] = {{"a: &a [lol, *a]\n", 1},
                                               {"x: 1\nm: &m {k: [1, {j: *m}]}\n", 2}};
  for (const auto& [text, line] : cases) {
    const auto problem = check_yaml_shape(text);
    ASSERT_TRUE(problem) << text;
    EXPECT_EQ(problem->line, line) << text;
    EXPECT_EQ(problem->what,
              "expected each alias (*name) after the node its anchor (&name) marks, got one "
              "inside that node: the value would contain itself without end");
  }
  // The same anchor used after its node ends, even inside a later one, is fine.
  EXPECT_FALSE(check_yaml_shape("a: &a [1]\nb: &b [*a, {c: *a}]\n"));
}

TEST(YamlExpansion, SpecsWithAFewAliasesAndBadYamlPassToTheLoader) {
  EXPECT_FALSE(check_yaml_shape("defaults: &d {ranks: 2}\njob: *d\nother: *d\n"));
  EXPECT_FALSE(check_yaml_shape("---\nname: a\n"));
  EXPECT_FALSE(check_yaml_shape(""));
  EXPECT_FALSE(check_yaml_shape("a: [1, 2\n"));  // the loader names this one
}

}  // namespace
