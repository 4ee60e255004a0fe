// The attempt and checkpoint records from both sides: what `dtrain supervise` and the
// Checkpointer write reads back as the same record, and bad lines are refused by name.
#include "records/attempt_record.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace dtrain::records {
namespace {

std::string message(const char* line) {
  try {
    parse_attempt_record(line, "attempts.jsonl:2");
  } catch (const AttemptFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AttemptRecord, RoundTrips) {
  AttemptRecord r;
  r.attempt = 1;
  r.start = "2026-11-26T02:00:00.000000Z";
  r.end = "2026-11-26T02:00:09.500000Z";
  r.status = 3;
  r.outcome = "restarted";
  r.cause = "rank 1 on node0 exited with status 3: \"boom\"";
  r.ranks = 2;
  r.nodes = {"node0", "node1"};
  r.checkpoints = 4;
  const std::string line = format_attempt_record(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind(R"({"v":1,"attempt":1,"start":"2026-11-26T02:00:00.000000Z",)", 0), 0u)
      << line;
  const AttemptRecord back = parse_attempt_record(line, "attempts.jsonl:1");
  EXPECT_EQ(back.attempt, 1);
  EXPECT_EQ(back.start, r.start);
  EXPECT_EQ(back.end, r.end);
  EXPECT_EQ(back.status, 3);
  EXPECT_EQ(back.outcome, "restarted");
  EXPECT_EQ(back.cause, r.cause);
  EXPECT_EQ(back.ranks, 2);
  EXPECT_EQ(back.nodes, r.nodes);
  EXPECT_EQ(back.checkpoints, 4);
}

TEST(AttemptRecord, IgnoresUnknownFields) {
  const auto r = parse_attempt_record(
      R"({"v":1,"attempt":0,"start":"2026-11-26T02:00:00.000000Z","end":"2026-11-26T02:00:01Z",)"
      R"("status":0,"outcome":"completed","cause":"","ranks":1,"nodes":[],"checkpoints":0,)"
      R"("later":true})",
      "f:1");
  EXPECT_EQ(r.outcome, "completed");
}

// A record with one field replaced: `field` then `value` as JSON text.
std::string attempt_with(const std::string& field, const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(
      R"({"v":1,"attempt":1,"start":"2026-11-26T02:00:00.000000Z",)"
      R"("end":"2026-11-26T02:00:09.500000Z","status":3,"outcome":"restarted","cause":"",)"
      R"("ranks":2,"nodes":["node0"],"checkpoints":0})");
  j[field] = nlohmann::json::parse(value);
  return message(j.dump().c_str());
}

// "attempt":2147483647 printed "attempt -2147483647" (attempt + 1 wrapped) and 4294967297 read as
// attempt 1; an end in year 9999 counted 251606959196.9 s of lost time. Each field out of its
// range is refused naming it, its range and the value as written.
TEST(AttemptRecord, FieldsOutOfTheirRangeAreRefusedAsWritten) {
  EXPECT_EQ(attempt_with("attempt", "2147483647"),
            "dtrain: attempts.jsonl:2: field \"attempt\": expected an integer from 0 to 999999, "
            "got 2147483647");
  EXPECT_EQ(attempt_with("attempt", "4294967297"),
            "dtrain: attempts.jsonl:2: field \"attempt\": expected an integer from 0 to 999999, "
            "got 4294967297");
  EXPECT_EQ(attempt_with("attempt", "-1"),
            "dtrain: attempts.jsonl:2: field \"attempt\": expected an integer from 0 to 999999, "
            "got -1");
  EXPECT_EQ(attempt_with("end", R"("9999-11-22T10:00:10.000000Z")"),
            "dtrain: attempts.jsonl:2: field \"end\": expected a time from 1970-01-01T00:00:00Z "
            "to 2100-01-01T00:00:00Z, got \"9999-11-22T10:00:10.000000Z\"");
  EXPECT_EQ(attempt_with("start", R"("yesterday")"),
            "dtrain: attempts.jsonl:2: field \"start\": expected a time from "
            "1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z, got \"yesterday\"");
  EXPECT_EQ(attempt_with("status", "4294967296"),
            "dtrain: attempts.jsonl:2: field \"status\": expected an integer from 0 to 255, got "
            "4294967296");
  EXPECT_EQ(attempt_with("ranks", "18446744073709551615"),
            "dtrain: attempts.jsonl:2: field \"ranks\": expected an integer from 0 to 2147483647, "
            "got 18446744073709551615");
  EXPECT_EQ(attempt_with("checkpoints", "2.5"),
            "dtrain: attempts.jsonl:2: field \"checkpoints\": expected an integer from 0 to "
            "2147483647, got 2.5");
  EXPECT_EQ(attempt_with("v", "4294967297"),
            "dtrain: attempts.jsonl:2: schema version 4294967297 is not known to this dtrain (1 "
            "is)");
  EXPECT_EQ(attempt_with("attempt", "999999"), "(no error)");
  EXPECT_EQ(attempt_with("end", R"("2100-01-01T00:00:00Z")"), "(no error)");
}

TEST(CheckpointRecord, FieldsOutOfTheirRangeAreRefused) {
  const auto error = [](const char* line) {
    try {
      parse_checkpoint_record(line, "checkpoints.jsonl:3");
    } catch (const AttemptFormatError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error(R"({"v":1,"time":"2026-11-26T02:00:01Z","step":18446744073709551615,)"
                  R"("path":"/ck","world":2})"),
            "dtrain: checkpoints.jsonl:3: field \"step\": expected an integer from 0 to "
            "9223372036854775807, got 18446744073709551615");
  EXPECT_EQ(error(R"({"v":1,"time":"2026-11-26T02:00:01Z","step":1,"path":"/ck","world":0})"),
            "dtrain: checkpoints.jsonl:3: field \"world\": expected an integer from 1 to "
            "2147483647, got 0");
  EXPECT_EQ(error(R"({"v":1,"time":"0000-01-01T00:00:00Z","step":1,"path":"/ck","world":2})"),
            "dtrain: checkpoints.jsonl:3: field \"time\": expected a time from "
            "1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z, got \"0000-01-01T00:00:00Z\"");
}

TEST(AttemptRecord, RefusesBadLinesByName) {
  EXPECT_EQ(message("not json"),
            "dtrain: attempts.jsonl:2: expected a JSON object, got \"not json\"");
  EXPECT_EQ(message(R"({"attempt":0})"),
            "dtrain: attempts.jsonl:2: missing field \"v\" (the schema version)");
  EXPECT_EQ(message(R"({"v":2})"),
            "dtrain: attempts.jsonl:2: schema version 2 is not known to this dtrain (1 is)");
  EXPECT_EQ(message(R"({"v":1,"attempt":"0"})"),
            "dtrain: attempts.jsonl:2: field \"attempt\": expected an integer from 0 to 999999, "
            "got \"0\"");
  EXPECT_EQ(message(R"({"v":1,"attempt":0,"start":"2026-11-26T02:00:00Z",)"
                    R"("end":"2026-11-26T02:00:01Z","status":0,"outcome":"ended",)"
                    R"("cause":"","ranks":1,"nodes":"n","checkpoints":0})"),
            "dtrain: attempts.jsonl:2: field \"nodes\": expected a list of host names, got \"n\"");
}

// Issue 45 item 7: an end an hour before its start read as "time lost to failures: 3700.9 s",
// and outcomes the supervisor never writes ("", "exploded", 10 KB of x) as "failed and
// restarted". Each is refused naming the field, what was expected and the value.
TEST(AttemptRecord, AnEndBeforeItsStartAndUnknownOutcomesAreRefused) {
  EXPECT_EQ(attempt_with("end", R"("2026-11-26T01:00:00.000000Z")"),
            "dtrain: attempts.jsonl:2: field \"end\": expected a time at or after the attempt's "
            "start (2026-11-26T02:00:00.000000Z), got \"2026-11-26T01:00:00.000000Z\"");
  EXPECT_EQ(attempt_with("end", R"("2026-11-26T02:00:00Z")"), "(no error)");  // the same instant
  EXPECT_EQ(attempt_with("outcome", R"("exploded")"),
            "dtrain: attempts.jsonl:2: field \"outcome\": expected completed, restarted, ended "
            "or stopped, got \"exploded\"");
  EXPECT_EQ(attempt_with("outcome", R"("")"),
            "dtrain: attempts.jsonl:2: field \"outcome\": expected completed, restarted, ended "
            "or stopped, got \"\"");
  const std::string long_x = attempt_with("outcome", "\"" + std::string(10240, 'x') + "\"");
  EXPECT_EQ(long_x.rfind("dtrain: attempts.jsonl:2: field \"outcome\": expected completed, "
                         "restarted, ended or stopped, got \"xxx",
                         0),
            0u)
      << long_x;
  EXPECT_LT(long_x.size(), 250u);
  for (std::string_view outcome : kAttemptOutcomes) {
    EXPECT_EQ(attempt_with("outcome", "\"" + std::string(outcome) + "\""), "(no error)");
  }
}

TEST(CheckpointRecord, RoundTrips) {
  CheckpointRecord r{"2026-11-26T02:00:01.000000Z", 40, "/ck/ckpt-000000000040", 2};
  const std::string line = format_checkpoint_record(r);
  EXPECT_EQ(line, R"({"v":1,"time":"2026-11-26T02:00:01.000000Z","step":40,)"
                  R"("path":"/ck/ckpt-000000000040","world":2})");
  const auto back = parse_checkpoint_record(line, "checkpoints.jsonl:1");
  EXPECT_EQ(back.time, r.time);
  EXPECT_EQ(back.step, 40);
  EXPECT_EQ(back.path, r.path);
  EXPECT_EQ(back.world, 2);
}

TEST(CheckpointRecord, CarriesTheSavesDurationAndSize) {
  CheckpointRecord r{"2026-11-26T02:00:01.000000Z", 40, "/ck/ckpt-000000000040", 2};
  r.seconds = 0.75;
  r.bytes = 52428800;
  const std::string line = format_checkpoint_record(r);
  EXPECT_EQ(line, R"({"v":1,"time":"2026-11-26T02:00:01.000000Z","step":40,)"
                  R"("path":"/ck/ckpt-000000000040","world":2,"seconds":0.75,"bytes":52428800})");
  const auto back = parse_checkpoint_record(line, "checkpoints.jsonl:1");
  EXPECT_EQ(back.seconds, 0.75);
  EXPECT_EQ(back.bytes, 52428800);
  // A record of an older dtrain has neither.
  const auto old = parse_checkpoint_record(
      R"({"v":1,"time":"2026-11-26T02:00:01Z","step":1,"path":"/ck","world":2})", "c:2");
  EXPECT_FALSE(old.seconds);
  EXPECT_FALSE(old.bytes);
  const auto error = [](const char* text) {
    try {
      parse_checkpoint_record(text, "checkpoints.jsonl:3");
    } catch (const AttemptFormatError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error(R"({"v":1,"time":"2026-11-26T02:00:01Z","step":1,"path":"/ck","world":2,)"
                  R"("seconds":-0.5})"),
            "dtrain: checkpoints.jsonl:3: field \"seconds\": expected a number from 0 to "
            "4102444800, got -0.5");
  EXPECT_EQ(error(R"({"v":1,"time":"2026-11-26T02:00:01Z","step":1,"path":"/ck","world":2,)"
                  R"("bytes":"1 MiB"})"),
            "dtrain: checkpoints.jsonl:3: field \"bytes\": expected an integer from 0 to "
            "9223372036854775807, got \"1 MiB\"");
}

TEST(JobEndRecord, RoundTripsAndRefusesANonBoolean) {
  const std::string line = format_job_end_record({124, true});
  EXPECT_EQ(line, R"({"v":1,"status":124,"walltime_reached":true})");
  const auto back = parse_job_end_record(line, "job-end.jsonl:1");
  EXPECT_EQ(back.status, 124);
  EXPECT_TRUE(back.walltime_reached);
  try {
    parse_job_end_record(R"({"v":1,"status":1,"walltime_reached":"yes"})", "job-end.jsonl:2");
    FAIL() << "a string was taken for walltime_reached";
  } catch (const AttemptFormatError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: job-end.jsonl:2: field \"walltime_reached\": expected true or false, "
                 "got \"yes\"");
  }
  try {
    parse_job_end_record(R"({"v":1,"status":-1,"walltime_reached":false})", "job-end.jsonl:3");
    FAIL() << "a negative status was taken";
  } catch (const AttemptFormatError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: job-end.jsonl:3: field \"status\": expected an integer from 0 to 255, "
                 "got -1");
  }
}

}  // namespace
}  // namespace dtrain::records
