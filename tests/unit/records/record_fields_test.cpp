// The fields of a record line read within their ranges: nothing narrowed, every refusal naming
// the field, the range and the value as written.
#include "records/record_fields.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>

namespace dtrain::records {
namespace {

constexpr long long kMax = std::numeric_limits<long long>::max();

TEST(IntegerWithin, NeverNarrows) {
  using nlohmann::json;
  EXPECT_EQ(integer_within(json::parse("7"), 0, 10), 7);
  EXPECT_EQ(integer_within(json::parse("-3"), -5, 10), -3);
  EXPECT_EQ(integer_within(json::parse("9223372036854775807"), 0, kMax), kMax);
  // 2^64-1 is no -1, and 2^32+1 no 1.
  EXPECT_EQ(integer_within(json::parse("18446744073709551615"), -1, kMax), std::nullopt);
  EXPECT_EQ(integer_within(json::parse("4294967297"), 0, 2147483647), std::nullopt);
  EXPECT_EQ(integer_within(json::parse("1.0"), 0, 10), std::nullopt);
  EXPECT_EQ(integer_within(json::parse("\"1\""), 0, 10), std::nullopt);
  EXPECT_EQ(integer_within(json::parse("11"), 0, 10), std::nullopt);
}

TEST(ShownValue, CutsALongValueAtACharacter) {
  EXPECT_EQ(shown_value(nlohmann::json("abc")), "\"abc\"");
  const std::string cut = shown_value(nlohmann::json(std::string(98, 'x') + "é" + "tail"));
  EXPECT_EQ(cut, "\"" + std::string(98, 'x') + "...");
}

std::string failure(const char* line, void (*read)(const RecordFields&)) {
  const nlohmann::json j = nlohmann::json::parse(line);
  const RecordFields f(j, "runs/a/x.jsonl:3",
                       [](const std::string& message) { throw std::runtime_error(message); });
  try {
    read(f);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RecordFields, EachRefusalNamesWhereTheFieldTheRangeAndTheValue) {
  EXPECT_EQ(failure(R"({})", [](const RecordFields& f) { f.integer("n", 0, 9); }),
            "dtrain: runs/a/x.jsonl:3: missing field \"n\"");
  EXPECT_EQ(failure(R"({"n":10})", [](const RecordFields& f) { f.integer("n", 0, 9); }),
            "dtrain: runs/a/x.jsonl:3: field \"n\": expected an integer from 0 to 9, got 10");
  EXPECT_EQ(failure(R"({"d":-0.5})", [](const RecordFields& f) { f.number("d", 0, 1.5); }),
            "dtrain: runs/a/x.jsonl:3: field \"d\": expected a number from 0 to 1.5, got -0.5");
  EXPECT_EQ(failure(R"({"t":4102444800.5})", [](const RecordFields& f) { f.unix_time("t"); }),
            "dtrain: runs/a/x.jsonl:3: field \"t\": expected Unix seconds from 0 to 4102444800, "
            "got 4102444800.5");
  EXPECT_EQ(failure(R"({"t":"2100-01-01T00:00:00.000001Z"})",
                    [](const RecordFields& f) { f.time_text("t"); }),
            "dtrain: runs/a/x.jsonl:3: field \"t\": expected a time from 1970-01-01T00:00:00Z to "
            "2100-01-01T00:00:00Z, got \"2100-01-01T00:00:00.000001Z\"");
  EXPECT_EQ(failure(R"({"s":1})", [](const RecordFields& f) { f.text("s"); }),
            "dtrain: runs/a/x.jsonl:3: field \"s\": expected a string, got 1");
  EXPECT_EQ(failure(R"({"b":"yes"})", [](const RecordFields& f) { f.boolean("b"); }),
            "dtrain: runs/a/x.jsonl:3: field \"b\": expected true or false, got \"yes\"");
  EXPECT_EQ(failure(R"({"t":"2026-11-22T10:00:00+01:00","u":0})",
                    [](const RecordFields& f) {
                      f.time_text("t");
                      f.unix_time("u");
                    }),
            "(no error)");
}

}  // namespace
}  // namespace dtrain::records
