// Text inside markup the reports write (the SVG plots of `dtrain stats --plot`, the HTML page of
// `dtrain report`): one escaper for both. Pure.
#pragma once

#include <string>

namespace dtrain::report {

// `s` safe in XML or HTML text and in double-quoted attribute values: & < > " escaped, control
// characters other than tab and newline (not allowed in XML 1.0) left out.
std::string xml_escape(const std::string& s);

}  // namespace dtrain::report
