// The words a switch accepts, wherever dtrain reads one from a person: plugstack.conf's
// enabled_by_default= and verbose=, the DTRAIN_* variables (DTRAIN_VERBOSE, DTRAIN_BIND), and
// libdtrain's. One list, pyxis' parse_bool words, so `DTRAIN_VERBOSE=off` works wherever
// `verbose=off` does. Here rather than in the plugin so libdtrain, which links this library, can
// use it too.
#pragma once

#include <optional>
#include <string_view>

namespace dtrain {

// true for 1, yes, y, true, on; false for 0, no, n, false, off (exactly these, lower case);
// nullopt for anything else, so each caller names its own setting in the message.
std::optional<bool> parse_switch(std::string_view text);

}  // namespace dtrain
