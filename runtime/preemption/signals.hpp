// The signal names a Preemption accepts, shared by signal_from_name() (public, preemption.hpp)
// and the parser of DTRAIN_PREEMPT_SIGNALS (settings.cpp), so both name the same list.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::runtime {

// "USR1, USR2, TERM, ...": for messages.
std::string accepted_signal_names();
// "USR1" or "SIGUSR1" -> SIGUSR1; nullopt for a name not in the list.
std::optional<int> signal_number(std::string_view name);
// A comma-separated list of names ("USR1,TERM", with or without "SIG") -> signal numbers. Throws
// Error (kInvalid) naming DTRAIN_PREEMPT_SIGNALS, the bad word and the accepted names.
std::vector<int> parse_signal_list(std::string_view list);

}  // namespace dtrain::runtime
