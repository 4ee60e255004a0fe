// Settings from a given environment: every DTRAIN_* variable's default, its accepted values and
// every refusal, word for word (init() reports these texts unchanged). No setenv(): the parser
// takes the environment as a lookup.
#include "settings.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace {

using dtrain::runtime::Settings;
using Env = std::map<std::string, std::string>;

Settings parse(const Env& env) {
  return dtrain::runtime::parse_settings([&env](const char* name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

// The refusal's message; fails the test when there is none or it is not kInvalid.
std::string refusal(const Env& env) {
  try {
    parse(env);
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(RuntimeSettings, AnEmptyEnvironmentGivesTheDefaults) {
  const Settings s = parse({});
  EXPECT_EQ(s.bootstrap, "");
  EXPECT_EQ(s.timeout, std::chrono::seconds(300));
  EXPECT_EQ(s.affinity, dtrain::affinity::SelfApplyMode::kAuto);
  EXPECT_FALSE(s.launcher_applied);
  EXPECT_EQ(s.topology, "");
  EXPECT_EQ(s.piece_bytes, 0u);
  EXPECT_TRUE(s.shm);
  EXPECT_EQ(s.fusion_bytes, std::size_t{64} << 20);
  EXPECT_EQ(s.preempt_signals, (std::vector<int>{SIGUSR1, SIGTERM}));
  EXPECT_EQ(s.attempt, 0);
}

// `dtrain supervise` numbers a restarted job's attempts from 0 (docs/fault-tolerance.md).
TEST(RuntimeSettings, TheAttemptComesFromDtrainAttempt) {
  EXPECT_EQ(parse({{"DTRAIN_ATTEMPT", "2"}}).attempt, 2);
  EXPECT_EQ(parse({{"DTRAIN_ATTEMPT", ""}}).attempt, 0);
  for (const char* bad : {"-1", "one", "1.0", " 1", "\t1", "+1", "0x1", "1234567"}) {
    EXPECT_EQ(
        refusal({{"DTRAIN_ATTEMPT", bad}}),
        std::string("dtrain: DTRAIN_ATTEMPT: expected the attempt number, 0 to 999999, got \"") +
            bad + "\"");
  }
}

// The descriptors a rank's logger hands it (run-rank, the plugin) are read here like every other
// DTRAIN_* variable (architecture rule 6), as text: a value that names no socket or page is no
// error, only ignored where it is used (peer_alarm.cpp, live_status.cpp).
TEST(RuntimeSettings, TheLoggersDescriptorsComeAsTheyAre) {
  const Settings none = parse({});
  EXPECT_FALSE(none.alarm_fd);
  EXPECT_FALSE(none.live_fd);
  const Settings both = parse({{"DTRAIN_ALARM_FD", "7"}, {"DTRAIN_LIVE_FD", "not a number"}});
  EXPECT_EQ(both.alarm_fd, std::optional<std::string>("7"));
  EXPECT_EQ(both.live_fd, std::optional<std::string>("not a number"));
  EXPECT_FALSE(parse({{"DTRAIN_ALARM_FD", ""}}).alarm_fd);
}

// How often a Meter records the rank's resource use (docs/metrics.md): seconds, 0 for never.
TEST(RuntimeSettings, TheResourceIntervalComesFromDtrainResourceInterval) {
  EXPECT_EQ(parse({}).record_detail, dtrain::records::RecordDetail::kIntervals);
  EXPECT_EQ(parse({{"DTRAIN_RECORDS", "steps"}}).record_detail,
            dtrain::records::RecordDetail::kSteps);
  EXPECT_EQ(refusal({{"DTRAIN_RECORDS", "Steps"}}),
            "dtrain: DTRAIN_RECORDS: expected \"intervals\" (a record per interval of steps, the "
            "default) or \"steps\" (a record per step), got \"Steps\"");
  EXPECT_EQ(parse({}).resource_interval, 5.0);
  EXPECT_EQ(parse({{"DTRAIN_RESOURCE_INTERVAL", ""}}).resource_interval, 5.0);
  EXPECT_EQ(parse({{"DTRAIN_RESOURCE_INTERVAL", "0"}}).resource_interval, 0.0);
  EXPECT_EQ(parse({{"DTRAIN_RESOURCE_INTERVAL", "0.5"}}).resource_interval, 0.5);
  EXPECT_EQ(parse({{"DTRAIN_RESOURCE_INTERVAL", "0.01"}}).resource_interval, 0.01);
  EXPECT_EQ(parse({{"DTRAIN_RESOURCE_INTERVAL", "86400"}}).resource_interval, 86400.0);
  for (const char* bad : {"-1", "0.001", "86401", "5s", " 5", "0x5", "inf", "nan", "off"}) {
    EXPECT_EQ(refusal({{"DTRAIN_RESOURCE_INTERVAL", bad}}),
              std::string("dtrain: DTRAIN_RESOURCE_INTERVAL: expected seconds between resource "
                          "samples, 0.01 to 86400, or 0 for none, got \"") +
                  bad + "\"");
  }
}

TEST(RuntimeSettings, EmptyValuesAreTheDefaultsToo) {
  const Settings s = parse({{"DTRAIN_BOOTSTRAP", ""},
                            {"DTRAIN_TIMEOUT", ""},
                            {"DTRAIN_AFFINITY", ""},
                            {"DTRAIN_CPUSET", ""},
                            {"DTRAIN_PIECE_BYTES", ""},
                            {"DTRAIN_SHM", ""},
                            {"DTRAIN_FUSION_BYTES", ""}});
  EXPECT_EQ(s.bootstrap, "");
  EXPECT_EQ(s.timeout, std::chrono::seconds(300));
  EXPECT_FALSE(s.launcher_applied);
  EXPECT_EQ(s.piece_bytes, 0u);
  EXPECT_TRUE(s.shm);
  EXPECT_EQ(s.fusion_bytes, std::size_t{64} << 20);
}

TEST(RuntimeSettings, EveryValueIsTaken) {
  const Settings s = parse({{"DTRAIN_BOOTSTRAP", "env"},
                            {"DTRAIN_TIMEOUT", "0.25"},
                            {"DTRAIN_AFFINITY", "off"},
                            {"DTRAIN_CPUSET", "0-3"},
                            {"DTRAIN_TOPOLOGY", "/x/node.xml"},
                            {"DTRAIN_PIECE_BYTES", "4096"},
                            {"DTRAIN_SHM", "0"},
                            {"DTRAIN_FUSION_BYTES", "1024"},
                            {"DTRAIN_PREEMPT_SIGNALS", "SIGUSR2,TERM,XCPU"}});
  EXPECT_EQ(s.bootstrap, "env");
  EXPECT_EQ(s.timeout, std::chrono::milliseconds(250));
  EXPECT_EQ(s.affinity, dtrain::affinity::SelfApplyMode::kOff);
  EXPECT_TRUE(s.launcher_applied);
  EXPECT_EQ(s.topology, "/x/node.xml");
  EXPECT_EQ(s.piece_bytes, 4096u);
  EXPECT_FALSE(s.shm);
  EXPECT_EQ(s.fusion_bytes, 1024u);
  EXPECT_EQ(s.preempt_signals, (std::vector<int>{SIGUSR2, SIGTERM, SIGXCPU}));
}

TEST(RuntimeSettings, EveryBootstrapWordIsAccepted) {
  for (const char* word : {"pmix", "mpi", "tcp", "env", "single"}) {
    EXPECT_EQ(parse({{"DTRAIN_BOOTSTRAP", word}}).bootstrap, word);
  }
}

TEST(RuntimeSettings, TimeoutRoundsToTheMillisecond) {
  EXPECT_EQ(parse({{"DTRAIN_TIMEOUT", "5"}}).timeout, std::chrono::seconds(5));
  EXPECT_EQ(parse({{"DTRAIN_TIMEOUT", "1e7"}}).timeout, std::chrono::seconds(10'000'000));
  EXPECT_EQ(parse({{"DTRAIN_TIMEOUT", "0.001"}}).timeout, std::chrono::milliseconds(1));
}

TEST(RuntimeSettings, ShmTakesTheSwitchWords) {
  for (const char* on : {"1", "yes", "y", "true", "on"})
    EXPECT_TRUE(parse({{"DTRAIN_SHM", on}}).shm) << on;
  for (const char* off : {"0", "no", "n", "false", "off"}) {
    EXPECT_FALSE(parse({{"DTRAIN_SHM", off}}).shm) << off;
  }
}

TEST(RuntimeSettings, MessagesThroughSharedMemoryUnlessTurnedOff) {
  EXPECT_TRUE(parse({}).shm_messages);  // the rings by default
  EXPECT_TRUE(parse({{"DTRAIN_SHM_MESSAGES", "1"}}).shm_messages);
  EXPECT_FALSE(parse({{"DTRAIN_SHM_MESSAGES", "off"}}).shm_messages);
  EXPECT_EQ(refusal({{"DTRAIN_SHM_MESSAGES", "rings"}}),
            "dtrain: DTRAIN_SHM_MESSAGES: expected 0 or off (messages within a node through the "
            "sockets) or 1 or on (through shared-memory rings), got \"rings\"");
}

TEST(RuntimeSettings, AlgoForcesFlatOrHierarchical) {
  EXPECT_EQ(parse({}).algo, dtrain::runtime::AllreduceAlgo::kAuto);
  EXPECT_EQ(parse({{"DTRAIN_ALGO", "auto"}}).algo, dtrain::runtime::AllreduceAlgo::kAuto);
  EXPECT_EQ(parse({{"DTRAIN_ALGO", "flat"}}).algo, dtrain::runtime::AllreduceAlgo::kFlat);
  EXPECT_EQ(parse({{"DTRAIN_ALGO", "hierarchical"}}).algo,
            dtrain::runtime::AllreduceAlgo::kHierarchical);
  for (const char* bad : {"ring", "Flat", "hier"}) {
    EXPECT_EQ(refusal({{"DTRAIN_ALGO", bad}}),
              std::string("dtrain: DTRAIN_ALGO: expected auto, flat (every rank alike) or "
                          "hierarchical (inside each node, then across nodes), got \"") +
                  bad + "\"");
  }
}

TEST(RuntimeSettings, EachRefusalNamesTheVariableAndTheValue) {
  EXPECT_EQ(refusal({{"DTRAIN_BOOTSTRAP", "bogus"}}),
            "dtrain: bootstrap: DTRAIN_BOOTSTRAP: unknown method; expected pmix, mpi, tcp, env or "
            "single, got \"bogus\"");
  // Under 1 ms would round to a deadline of 0: refused, not rounded.
  // strtod took hexadecimal ("0x10" was 16 s), hexadecimal floats and leading white space.
  for (const char* bad : {"soon", "0", "-1", "1e8", "5s", "nan", "0.0004", "1e-5", "0.0009", "0x10",
                          "0x1p3", " 5", "\t5", "5 ", "+5", "inf", "1e999"}) {
    EXPECT_EQ(refusal({{"DTRAIN_TIMEOUT", bad}}),
              std::string("dtrain: DTRAIN_TIMEOUT: expected a positive number of seconds (at least "
                          "0.001, at most 1e7), got \"") +
                  bad + "\"");
  }
  EXPECT_EQ(refusal({{"DTRAIN_AFFINITY", "yes"}}),
            "dtrain: DTRAIN_AFFINITY: unknown value; expected on or off (or unset: apply when a "
            "launcher started the process), got \"yes\"");
  for (const char* bad : {"12k", "4095", "-4096", "1e6", " 4096", "+4096", "0x1000"}) {
    EXPECT_EQ(refusal({{"DTRAIN_PIECE_BYTES", bad}}),
              std::string("dtrain: DTRAIN_PIECE_BYTES: expected a byte count of at least 4096, "
                          "got \"") +
                  bad + "\"");
  }
  for (const char* bad : {"maybe", "ON", "2"}) {
    EXPECT_EQ(refusal({{"DTRAIN_SHM", bad}}),
              std::string("dtrain: DTRAIN_SHM: expected 0 or off (allreduce through MPI or TCP "
                          "messages) or 1 or on (through shared memory when every rank is on one "
                          "node), got \"") +
                  bad + "\"");
  }
  // Digits only: strtoull would skip the space and wrap " -1" to 2^64-1.
  for (const char* bad : {"1023", " -1", "-1", " 4096", "+4096", "4096 ", "\t2048"}) {
    EXPECT_EQ(refusal({{"DTRAIN_FUSION_BYTES", bad}}),
              std::string("dtrain: DTRAIN_FUSION_BYTES: expected a byte count of at least 1024, "
                          "got \"") +
                  bad + "\"");
  }
  EXPECT_EQ(refusal({{"DTRAIN_PREEMPT_SIGNALS", "USR1,KILL"}}),
            "dtrain: preemption: DTRAIN_PREEMPT_SIGNALS: unknown signal \"KILL\"; expected "
            "comma-separated names among USR1, USR2, TERM, INT, HUP, QUIT, XCPU, URG, got "
            "\"USR1,KILL\"");
  // Set but empty names no signal.
  EXPECT_EQ(refusal({{"DTRAIN_PREEMPT_SIGNALS", ""}}),
            "dtrain: preemption: DTRAIN_PREEMPT_SIGNALS: unknown signal \"\"; expected "
            "comma-separated names among USR1, USR2, TERM, INT, HUP, QUIT, XCPU, URG, got \"\"");
}

// init() used the variables in this order; with several bad ones, the same one is reported.
TEST(RuntimeSettings, TheFirstBadVariableInInitsOrderIsReported) {
  const Env all_bad = {
      {"DTRAIN_BOOTSTRAP", "x"},      {"DTRAIN_TIMEOUT", "x"}, {"DTRAIN_AFFINITY", "x"},
      {"DTRAIN_PIECE_BYTES", "x"},    {"DTRAIN_SHM", "x"},     {"DTRAIN_FUSION_BYTES", "x"},
      {"DTRAIN_PREEMPT_SIGNALS", "x"}};
  const std::vector<std::string> order = {
      "DTRAIN_BOOTSTRAP", "DTRAIN_TIMEOUT",      "DTRAIN_AFFINITY",       "DTRAIN_PIECE_BYTES",
      "DTRAIN_SHM",       "DTRAIN_FUSION_BYTES", "DTRAIN_PREEMPT_SIGNALS"};
  Env env = all_bad;
  for (const std::string& name : order) {
    SCOPED_TRACE(name);
    EXPECT_NE(refusal(env).find(name), std::string::npos);
    env.erase(name);
  }
  EXPECT_NO_THROW(parse(env));
}

// A store given by the caller (init(ExternalBootstrap): a torch process group) carries socket
// addresses only, and MPI's world need not be the caller's group: always the sockets.
TEST(RuntimeSettings, AnExternalStoreAlwaysTakesTheSockets) {
  using dtrain::runtime::host_transport;
  using dtrain::runtime::HostTransport;
  EXPECT_EQ(host_transport(HostTransport::kAuto, "external", false), HostTransport::kTcp);
  EXPECT_EQ(host_transport(HostTransport::kAuto, "external", true), HostTransport::kTcp);
  EXPECT_EQ(host_transport(HostTransport::kTcp, "external", true), HostTransport::kTcp);
  try {
    host_transport(HostTransport::kMpi, "external", true);
    ADD_FAILURE() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    EXPECT_NE(std::string(e.what()).find("DTRAIN_TRANSPORT=mpi: expected an MPI launch, got a "
                                         "store given by the caller"),
              std::string::npos)
        << e.what();
  }
  // Unchanged for the launches that had it before.
  EXPECT_EQ(host_transport(HostTransport::kAuto, "pmix", true), HostTransport::kMpi);
  EXPECT_EQ(host_transport(HostTransport::kAuto, "tcp", true), HostTransport::kTcp);
}

}  // namespace
