#include "step_policy.hpp"

#include <optional>

#include "common/words.hpp"
#include "errors.hpp"

namespace dtrain::spank {
namespace {

struct Preset {
  std::string_view name;
  affinity::Policy policy;
};

affinity::Policy identity_preset() {
  affinity::Policy p;
  p.gpu = affinity::GpuPolicy::kIdentity;
  return p;
}

affinity::Policy own_first_preset() {
  affinity::Policy p;
  p.gpu_visibility = affinity::GpuVisibility::kOwnFirst;
  return p;
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> table = {
      {"closest", affinity::Policy{}},
      {"identity", identity_preset()},
      {"own-first", own_first_preset()},
  };
  return table;
}

}  // namespace

const std::vector<std::string_view>& step_policy_words() {
  static const std::vector<std::string_view> words = {
      "default", "closest", "identity", "own-first", "off", "strict", "best-effort"};
  return words;
}

StepPolicy parse_step_policy(std::string_view text, std::string_view what,
                             const StepPolicy& fallback, bool allow_default) {
  auto fail = [&](const std::string& problem) {
    std::vector<std::string_view> accepted;
    for (auto w : step_policy_words()) {
      if (allow_default || w != "default") accepted.push_back(w);
    }
    return OptionError("dtrain: " + std::string(what) + ": " + problem +
                       "; expected a comma-separated list of " + join_alternatives(accepted) +
                       ", got \"" + std::string(text) + "\"");
  };
  StepPolicy out = fallback;
  std::optional<std::string_view> preset_word;
  std::optional<std::string_view> failure_word;
  std::string_view rest = text;
  if (rest.empty()) throw fail("empty policy");
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view word = rest.substr(0, comma);
    const bool is_failure_mode = word == "strict" || word == "best-effort";
    bool is_preset = word == "off" || (word == "default" && allow_default);
    for (const auto& p : presets()) is_preset = is_preset || p.name == word;
    if (word.empty()) throw fail("an empty word");
    if (!is_preset && !is_failure_mode) throw fail("unknown word \"" + std::string(word) + "\"");
    auto& slot = is_preset ? preset_word : failure_word;
    if (slot) {
      throw fail("\"" + std::string(*slot) + "\" and \"" + std::string(word) +
                 "\" contradict each other");
    }
    slot = word;
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  // Naming a policy turns binding on, whatever the fallback said, unless the word is "off".
  out.enabled = preset_word != "off";
  for (const auto& p : presets()) {
    if (preset_word == p.name) out.affinity = p.policy;
  }
  if (failure_word) out.best_effort = *failure_word == "best-effort";
  return out;
}

std::string to_string(const StepPolicy& policy) {
  if (!policy.enabled) return "off";
  std::string out;
  for (const auto& p : presets()) {
    if (p.policy == policy.affinity) out = std::string(p.name);
  }
  if (out.empty()) {
    out = "gpu=" + std::string(affinity::to_string(policy.affinity.gpu)) +
          " gpu-visibility=" + std::string(affinity::to_string(policy.affinity.gpu_visibility)) +
          " cpu=" + std::string(affinity::to_string(policy.affinity.cpu)) +
          " nic=" + std::string(affinity::to_string(policy.affinity.nic));
  }
  return policy.best_effort ? out + ",best-effort" : out;
}

}  // namespace dtrain::spank
