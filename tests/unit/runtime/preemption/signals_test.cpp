// The preemption signal names (signals.cpp): name to number both ways of spelling it, the list
// parser, and its refusal message.
#include "preemption/signals.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace {

TEST(Signals, AcceptedNamesInOrder) {
  EXPECT_EQ(accepted_signal_names(), "USR1, USR2, TERM, INT, HUP, QUIT, XCPU, URG");
}

TEST(Signals, NamesWithOrWithoutSigMapToNumbers) {
  EXPECT_EQ(signal_number("USR1"), SIGUSR1);
  EXPECT_EQ(signal_number("SIGUSR1"), SIGUSR1);
  EXPECT_EQ(signal_number("USR2"), SIGUSR2);
  EXPECT_EQ(signal_number("SIGTERM"), SIGTERM);
  EXPECT_EQ(signal_number("INT"), SIGINT);
  EXPECT_EQ(signal_number("HUP"), SIGHUP);
  EXPECT_EQ(signal_number("QUIT"), SIGQUIT);
  EXPECT_EQ(signal_number("SIGXCPU"), SIGXCPU);
  EXPECT_EQ(signal_number("URG"), SIGURG);
}

TEST(Signals, OtherNamesHaveNoNumber) {
  EXPECT_EQ(signal_number("KILL"), std::nullopt);
  EXPECT_EQ(signal_number("usr1"), std::nullopt);
  EXPECT_EQ(signal_number("SIG"), std::nullopt);
  EXPECT_EQ(signal_number(""), std::nullopt);
  EXPECT_EQ(signal_number("10"), std::nullopt);
  EXPECT_EQ(signal_number(" USR1"), std::nullopt);
}

TEST(Signals, ParsesACommaSeparatedList) {
  EXPECT_EQ(parse_signal_list("USR1"), std::vector<int>{SIGUSR1});
  EXPECT_EQ(parse_signal_list("USR1,SIGTERM,URG"), (std::vector<int>{SIGUSR1, SIGTERM, SIGURG}));
}

std::string refusal_of(const std::string& list) {
  try {
    parse_signal_list(list);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kInvalid);
    return e.what();
  }
  return "(no error)";
}

TEST(Signals, RefusesAnUnknownWordNamingTheAcceptedOnes) {
  EXPECT_EQ(refusal_of("USR1,KILL"),
            "dtrain: preemption: DTRAIN_PREEMPT_SIGNALS: unknown signal \"KILL\"; expected "
            "comma-separated names among USR1, USR2, TERM, INT, HUP, QUIT, XCPU, URG, got "
            "\"USR1,KILL\"");
  EXPECT_EQ(refusal_of("USR1, TERM"),
            "dtrain: preemption: DTRAIN_PREEMPT_SIGNALS: unknown signal \" TERM\"; expected "
            "comma-separated names among USR1, USR2, TERM, INT, HUP, QUIT, XCPU, URG, got "
            "\"USR1, TERM\"");
  EXPECT_EQ(refusal_of("USR1,"),
            "dtrain: preemption: DTRAIN_PREEMPT_SIGNALS: unknown signal \"\"; expected "
            "comma-separated names among USR1, USR2, TERM, INT, HUP, QUIT, XCPU, URG, got "
            "\"USR1,\"");
}

}  // namespace
}  // namespace dtrain::runtime
