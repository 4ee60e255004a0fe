// JSON text of what the readers report. Their strings come from files a job wrote (host names in
// start lines, log lines, metric records), which need not be UTF-8; nlohmann's dump() throws
// type_error 316 on such bytes, so every report is dumped here, with each invalid byte replaced by
// U+FFFD.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dtrain::report {

// `indent` as nlohmann's dump(): -1 for one line.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace dtrain::report
