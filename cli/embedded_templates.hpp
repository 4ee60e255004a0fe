// The job-script templates of templates/, compiled into dtrain so an installed binary and the
// build tree render the same scripts without looking for data files.
#pragma once

#include <string_view>

namespace dtrain::cli {

// Throws std::logic_error for a name that is not in templates/.
std::string_view embedded_template(std::string_view name);

}  // namespace dtrain::cli
