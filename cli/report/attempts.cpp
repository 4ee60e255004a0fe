#include "report/attempts.hpp"

namespace dtrain::report {

int last_attempt(const std::vector<records::AttemptRecord>& attempts) {
  if (attempts.empty()) return 0;
  const records::AttemptRecord& last = attempts.back();
  return last.outcome == "restarted" ? last.attempt + 1 : last.attempt;
}

std::string format_attempts(const std::vector<records::AttemptRecord>& attempts) {
  if (attempts.empty()) return "";
  const records::AttemptRecord& last = attempts.back();
  // A last record that says "restarted" was followed by an attempt that has no record yet: it is
  // running, or its supervisor was killed with it.
  const bool unrecorded = last.outcome == "restarted";
  const int covered = last_attempt(attempts) + 1;
  std::string out = "attempt " + std::to_string(covered) + " of the job";
  out += unrecorded ? " (no record yet: running, or its supervisor was stopped with it)"
                    : " (" + last.outcome + ")";
  out += ": the report below covers its lines only\n";
  for (const auto& a : attempts) {
    if (!unrecorded && a.attempt == last.attempt) break;
    out += "  attempt " + std::to_string(a.attempt + 1) + " " + a.outcome + " at " + a.end +
           (a.cause.empty() ? std::string() : ": " + a.cause) + "\n";
  }
  return out;
}

}  // namespace dtrain::report
