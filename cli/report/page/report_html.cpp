#include "report/page/report_html.hpp"

#include <nlohmann/json.hpp>

#include "report/json_text.hpp"
#include "report/markup.hpp"
#include "report/page/report_assets.hpp"

namespace dtrain::report {

std::string report_html(const nlohmann::json& model, const std::string& title) {
  // Inside <script> only "</script" (and "<!--") would end or confuse the element: every "<" in
  // the JSON text is written as \u003c, which JSON.parse reads back as "<".
  std::string data;
  for (char c : json_text(model)) {
    if (c == '<') {
      data += "\\u003c";
    } else {
      data += c;
    }
  }
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"dtrain report\">\n<title>";
  out += xml_escape(title);
  out += "</title>\n<style>\n";
  out += report_css();
  out += "</style>\n</head>\n<body>\n<header class=\"page\"><h1>";
  out += xml_escape(title);
  out += "</h1><p>";
  out += xml_escape("dtrain report, " + model.value("generated", std::string()) +
                    ": every chart is drawn from the data in this file");
  out +=
      "</p></header>\n<main>\n<noscript><p>This page draws its charts with JavaScript; the data "
      "is in the dtrain-report-data script element.</p></noscript>\n</main>\n"
      "<script type=\"application/json\" id=\"dtrain-report-data\">";
  out += data;
  out += "</script>\n<script>\n";
  out += report_js();
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace dtrain::report
