// Rank logs the readers could not read (a FIFO, a directory, a dangling link, a loop, /dev/zero:
// list_unreadable_rank_files in cli/run_dir), in the first-error report: named with why in every
// form of it, and a culprit that only reports a lost peer or timeout becomes unknown. Apart from
// first_error.cpp, whose subject is the logs that were read. Pure.
#pragma once

#include <string>
#include <vector>

#include "report/first_error.hpp"

namespace dtrain::report {

// Names `unreadable` in `report` (they were left out without a word, and the culprit moved to a
// victim): a culprit that only reports a lost peer or timeout is then unknown (it may have lost a
// rank whose log could not be read); one that failed on its own, went silent or was named by the
// others stays, with the unreadable logs listed beside it.
void add_unreadable_logs(FirstErrorReport& report, std::vector<UnreadableLog> unreadable);

// "the log of rank 1", "the logs of ranks 1,3"
std::string unreadable_ranks(const FirstErrorReport& r);
// The report's text when the culprit is unknown: the unreadable ranks, then the failing ranks
// whose logs were read.
std::string format_unknown(const FirstErrorReport& r);
// The skipped files, one line each, under the report ("" when none).
std::string format_unreadable(const FirstErrorReport& r);

}  // namespace dtrain::report
