#include "plan/kubectl.hpp"

#include <regex>

namespace dtrain::plan {

Argv kubectl_create_command(const std::string& manifest) {
  return {"kubectl", "create", "-f", manifest, "-o", "name"};
}

std::string parse_kubectl_created(std::string_view output) {
  std::string_view text = output;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  const auto nl = text.rfind('\n');
  const std::string last(nl == std::string_view::npos ? text : text.substr(nl + 1));
  static const std::regex kCreated("mpijob(\\.kubeflow\\.org)?/[a-z][-a-z0-9]{0,62}");
  if (!std::regex_match(last, kCreated)) {
    std::string shown(text.substr(0, 400));
    throw SubmitError(
        "expected the created object such as \"mpijob.kubeflow.org/pi\" in the "
        "output, got " +
        (shown.empty() ? std::string("nothing") : "\"" + shown + "\""));
  }
  return last;
}

}  // namespace dtrain::plan
