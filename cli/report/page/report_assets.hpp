// The report page's style and script (cli/report/page/assets/), compiled into the program from
// those files by CMake (report_assets.cpp.in), so `dtrain report` writes a page needing no other
// file.
#pragma once

#include <string_view>

namespace dtrain::report {

std::string_view report_css();
std::string_view report_js();

}  // namespace dtrain::report
