// A restarted job's attempts as `dtrain logs` speaks of them (attempts.jsonl, written by
// `dtrain supervise`; docs/fault-tolerance.md): which attempt a report covers and how the earlier
// ones ended. Pure, like the rest of dtrain::report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "records/attempt_record.hpp"

namespace dtrain::report {

// The attempt (from 0) the logs' last lines belong to: after a record that says "restarted" comes
// an attempt with no record yet; 0 without records.
int last_attempt(const std::vector<records::AttemptRecord>& attempts);

// The lines before the report of a job that restarted (attempts.jsonl, docs/fault-tolerance.md):
// which attempt the report covers (`covered`, from 0; by default the logs' last), how the earlier
// ones ended, and the later ones; "" without records.
std::string format_attempts(const std::vector<records::AttemptRecord>& attempts,
                            std::optional<int> covered = std::nullopt);

// The first attempt (from 0) that failed and was restarted; nothing when none was.
std::optional<int> first_failed_attempt(const std::vector<records::AttemptRecord>& attempts);

}  // namespace dtrain::report
