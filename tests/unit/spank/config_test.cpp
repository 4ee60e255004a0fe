#include "config.hpp"

#include <gtest/gtest.h>

#include "errors.hpp"

namespace dtrain::spank {
namespace {

std::string message_of(const std::vector<std::string>& args) {
  try {
    parse_config(args);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Config, DefaultsWithoutArguments) {
  const PluginConfig c = parse_config({});
  EXPECT_EQ(c.topology, "");
  EXPECT_FALSE(c.enabled_by_default);
  EXPECT_FALSE(c.verbose);
  EXPECT_EQ(to_string(c.default_policy), "closest");
}

TEST(Config, ReadsEveryKey) {
  const PluginConfig c =
      parse_config({"topology=/etc/slurm/node.xml", "default_policy=identity,best-effort",
                    "enabled_by_default=yes", "verbose=0"});
  EXPECT_EQ(c.topology, "/etc/slurm/node.xml");
  EXPECT_EQ(c.default_policy.affinity.gpu, affinity::GpuPolicy::kIdentity);
  EXPECT_TRUE(c.default_policy.best_effort);
  EXPECT_TRUE(c.enabled_by_default);
  EXPECT_FALSE(c.verbose);
  EXPECT_TRUE(parse_config({"verbose=true"}).verbose);
  EXPECT_TRUE(parse_config({"verbose=1"}).verbose);
}

TEST(Config, UnknownKeyIsNamed) {
  EXPECT_EQ(message_of({"topolgy=/x.xml"}),
            "dtrain: plugstack.conf: unknown key \"topolgy\"; expected topology=PATH, "
            "default_policy=POLICY, enabled_by_default=0|1 or verbose=0|1, got "
            "\"topolgy=/x.xml\"");
}

TEST(Config, BadValuesNameTheKey) {
  EXPECT_EQ(message_of({"verbose=maybe"}),
            "dtrain: plugstack.conf: verbose: expected 0 or 1 (or yes/no, true/false), got "
            "\"maybe\"");
  EXPECT_EQ(message_of({"enabled_by_default="}),
            "dtrain: plugstack.conf: enabled_by_default: expected 0 or 1 (or yes/no, "
            "true/false), got \"\"");
  EXPECT_EQ(message_of({"topology=node.xml"}),
            "dtrain: plugstack.conf: topology: expected the absolute path of an hwloc XML file, "
            "got \"node.xml\"");
  EXPECT_NE(message_of({"default_policy=fast"})
                .find("dtrain: plugstack.conf: default_policy: unknown word \"fast\""),
            std::string::npos);
  EXPECT_NE(message_of({"default_policy=default"}).find("unknown word \"default\""),
            std::string::npos);
  EXPECT_NE(message_of({"default_policy=off"}).find("default_policy: \"off\" would make"),
            std::string::npos);
}

TEST(Config, MalformedAndRepeatedArguments) {
  EXPECT_EQ(message_of({"verbose"}),
            "dtrain: plugstack.conf: argument \"verbose\": expected key=value (topology=PATH, "
            "default_policy=POLICY, enabled_by_default=0|1 or verbose=0|1), got \"verbose\"");
  EXPECT_NE(message_of({"=1"}).find("expected key=value"), std::string::npos);
  EXPECT_EQ(message_of({"verbose=1", "verbose=0"}),
            "dtrain: plugstack.conf: verbose: given twice; expected each key once, got "
            "\"verbose=0\" again");
}

}  // namespace
}  // namespace dtrain::spank
