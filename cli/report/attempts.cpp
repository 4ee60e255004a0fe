#include "report/attempts.hpp"

namespace dtrain::report {

int last_attempt(const std::vector<records::AttemptRecord>& attempts) {
  if (attempts.empty()) return 0;
  const records::AttemptRecord& last = attempts.back();
  return last.outcome == "restarted" ? last.attempt + 1 : last.attempt;
}

std::string format_attempts(const std::vector<records::AttemptRecord>& attempts,
                            std::optional<int> covered) {
  if (attempts.empty()) return "";
  const int last = last_attempt(attempts);
  const int shown = covered.value_or(last);
  // A last record that says "restarted" was followed by an attempt that has no record yet: it is
  // running, or its supervisor was killed with it.
  const records::AttemptRecord* record = nullptr;
  for (const auto& a : attempts) {
    if (a.attempt == shown) record = &a;
  }
  std::string out = "attempt " + std::to_string(shown + 1) + " of the job";
  out += record ? " (" + record->outcome + ")"
                : " (no record yet: running, or its supervisor was stopped with it)";
  out += ": the report below covers its lines only\n";
  const auto line = [](const records::AttemptRecord& a) {
    return "attempt " + std::to_string(a.attempt + 1) + " " + a.outcome + " at " + a.end +
           (a.cause.empty() ? std::string() : ": " + a.cause) + "\n";
  };
  for (const auto& a : attempts) {
    if (a.attempt < shown) out += "  " + line(a);
  }
  for (const auto& a : attempts) {
    if (a.attempt > shown) out += "  later: " + line(a);
  }
  if (last > shown && attempts.back().attempt < last) {
    out += "  later: attempt " + std::to_string(last + 1) +
           " (no record yet: running, or its supervisor was stopped with it)\n";
  }
  return out;
}

std::optional<int> first_failed_attempt(const std::vector<records::AttemptRecord>& attempts) {
  for (const auto& a : attempts) {
    if (a.outcome == "restarted") return a.attempt;
  }
  return std::nullopt;
}

}  // namespace dtrain::report
