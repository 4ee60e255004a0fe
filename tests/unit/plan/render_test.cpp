#include "plan/render.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace dtrain::plan {
namespace {

// What bash makes of `printf '%s\n' WORD` for the quoted word: the word itself, never run.
std::string through_bash(const std::string& word) {
  const std::string cmd = "bash -c " + shell_quote("printf '%s' " + shell_quote(word));
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(ShellQuote, SafeWordsStayBare) {
  EXPECT_EQ(shell_quote("build/bin/train"), "build/bin/train");
  EXPECT_EQ(shell_quote("--lr=0.1"), "--lr=0.1");
}

TEST(ShellQuote, EverythingElseIsSingleQuoted) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("$(touch /tmp/x)"), "'$(touch /tmp/x)'");
  EXPECT_EQ(shell_quote("a'b\"c"), "'a'\\''b\"c'");
  EXPECT_EQ(shell_quote("=x"), "'=x'");
}

TEST(ShellQuote, BashReadsEveryWordBackVerbatim) {
  for (const std::string word : {"$(touch /tmp/dtrain-should-not-exist)", "a'b\"c", "`id`", "*",
                                 "~root", "a\nb", "$HOME", "\\", "!x", "''", "; rm -rf /"}) {
    EXPECT_EQ(through_bash(word), word);
  }
}

TEST(ShellExport, QuotesTheValueAndRefusesANameThatIsNotAVariable) {
  EXPECT_EQ(shell_export("MSG", "it's"), "export MSG='it'\\''s'\n");
  for (const std::string name : {"X;touch /tmp/PWNED;Y", "A\nB", "1A", ""}) {
    EXPECT_THROW(shell_export(name, "v"), std::logic_error) << name;
  }
}

TEST(ShellJoin, QuotesEachWord) {
  EXPECT_EQ(shell_join({"python", "train.py", "--name", "my run"}),
            "python train.py --name 'my run'");
}

TEST(RenderTemplate, ReplacesPlaceholders) {
  EXPECT_EQ(render_template("a {{x}} b {{y}}{{x}}", {{"x", "1"}, {"y", "2"}}), "a 1 b 21");
}

TEST(RenderTemplate, MissingOrUnusedValuesAreBugs) {
  EXPECT_THROW(render_template("{{x}}", {}), std::logic_error);
  EXPECT_THROW(render_template("x", {{"x", "1"}}), std::logic_error);
  EXPECT_THROW(render_template("{{x", {{"x", "1"}}), std::logic_error);
}

}  // namespace
}  // namespace dtrain::plan
