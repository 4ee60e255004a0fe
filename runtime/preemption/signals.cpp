#include "preemption/signals.hpp"

#include <signal.h>

#include <algorithm>
#include <array>
#include <utility>

#include "common/job_signals.hpp"
#include "dtrain/dtrain.hpp"

// Any signal a job may be sent can be watched (common/job_signals.hpp).
namespace dtrain::runtime {

std::string accepted_signal_names() {
  std::string out;
  for (const JobSignal& s : kJobSignals) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

std::optional<int> signal_number(std::string_view name) {
  if (name.substr(0, 3) == "SIG") name.remove_prefix(3);
  for (const JobSignal& s : kJobSignals) {
    if (name == s.name) return s.number;
  }
  return std::nullopt;
}

std::vector<int> parse_signal_list(std::string_view list) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view word = list.substr(start, comma - start);
    const std::optional<int> number = signal_number(word);
    if (!number) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: preemption: DTRAIN_PREEMPT_SIGNALS: unknown signal \"" +
                      std::string(word) + "\"; expected comma-separated names among " +
                      accepted_signal_names() + ", got \"" + std::string(list) + "\"");
    }
    out.push_back(*number);
    start = comma + 1;
  }
  return out;
}

}  // namespace dtrain::runtime
