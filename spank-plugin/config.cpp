#include "config.hpp"

#include <optional>
#include <set>
#include <string_view>

#include "common/on_off.hpp"
#include "errors.hpp"

namespace dtrain::spank {
namespace {

constexpr std::string_view kWhere = "dtrain: plugstack.conf: ";
constexpr std::string_view kKeys =
    "topology=PATH, default_policy=POLICY, enabled_by_default=0|1 or verbose=0|1";

// Anything but a switch word is an error, never a silent false.
bool parse_bool(std::string_view key, std::string_view value) {
  if (const auto on = dtrain::parse_switch(value)) return *on;
  throw ConfigError(std::string(kWhere) + std::string(key) +
                    ": expected 0 or 1 (or yes/no, true/false), got \"" + std::string(value) +
                    "\"");
}

}  // namespace

PluginConfig parse_config(const std::vector<std::string>& args) {
  PluginConfig config;
  std::set<std::string, std::less<>> seen;
  for (const std::string& arg : args) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError(std::string(kWhere) + "argument \"" + arg + "\": expected key=value (" +
                        std::string(kKeys) + "), got \"" + arg + "\"");
    }
    const std::string key = arg.substr(0, eq);
    const std::string_view value = std::string_view(arg).substr(eq + 1);
    if (!seen.insert(key).second) {
      throw ConfigError(std::string(kWhere) + key +
                        ": given twice; expected each key once, got \"" + arg + "\" again");
    }
    if (key == "topology") {
      // Slurm's daemons do not run in the directory the admin wrote the file from.
      if (value.empty() || value.front() != '/') {
        throw ConfigError(std::string(kWhere) +
                          "topology: expected the absolute path of an hwloc XML file, got \"" +
                          std::string(value) + "\"");
      }
      config.topology = std::string(value);
    } else if (key == "default_policy") {
      try {
        config.default_policy =
            parse_step_policy(value, "plugstack.conf: default_policy", StepPolicy{}, false);
      } catch (const OptionError& e) {
        throw ConfigError(e.what());
      }
      if (!config.default_policy.enabled) {
        throw ConfigError(std::string(kWhere) +
                          "default_policy: \"off\" would make --dtrain do nothing; expected a "
                          "policy that binds (use enabled_by_default=0 to bind only on request), "
                          "got \"" +
                          std::string(value) + "\"");
      }
    } else if (key == "enabled_by_default") {
      config.enabled_by_default = parse_bool(key, value);
    } else if (key == "verbose") {
      config.verbose = parse_bool(key, value);
    } else {
      throw ConfigError(std::string(kWhere) + "unknown key \"" + key + "\"; expected " +
                        std::string(kKeys) + ", got \"" + arg + "\"");
    }
  }
  return config;
}

}  // namespace dtrain::spank
