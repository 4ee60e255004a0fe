// `dtrain report`'s page (docs/report.md): one HTML file holding its style, its script and the
// model (run_page.hpp's JSON) in a <script type="application/json"> element; the script draws the
// charts as inline SVG when the page is opened, from file:// too. Nothing is loaded from the
// network. Pure: the command writes the text to a file.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace dtrain::report {

std::string report_html(const nlohmann::json& model, const std::string& title);

}  // namespace dtrain::report
