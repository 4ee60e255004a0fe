// The HTML report's page (cli/report/page/report_html.hpp): the model, the style and the script in
// one file that asks nothing of the network, and the model escaped inside it.
#include "report/page/report_html.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace dtrain::report {
namespace {

TEST(ReportHtml, ThePageCarriesItsDataScriptAndStyleAndNothingFromTheNetwork) {
  nlohmann::json model = {{"generated", "now"},
                          {"runs", nlohmann::json::array({{{"label", "a</script><b>"}}})},
                          {"scaling", nlohmann::json::array()}};
  const std::string html = report_html(model, "dtrain report: <a>");
  EXPECT_NE(html.find("<title>dtrain report: &lt;a&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<script type=\"application/json\" id=\"dtrain-report-data\">"),
            std::string::npos);
  EXPECT_NE(html.find(R"("a\u003c/script>\u003cb>")"), std::string::npos);
  EXPECT_EQ(html.find("</script><b>"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  for (const char* remote : {"http://", "https://", " src=", "<link", "@import"}) {
    std::string::size_type at = 0;
    while ((at = html.find(remote, at)) != std::string::npos) {
      // The SVG namespace is a name, not a resource.
      const bool svg_ns = html.compare(at, 26, "http://www.w3.org/2000/svg") == 0;
      EXPECT_TRUE(svg_ns) << "the page refers to " << html.substr(at, 60);
      ++at;
    }
  }
}

}  // namespace
}  // namespace dtrain::report
