#include "flag_values.hpp"

#include <utility>

#include "common/number_text.hpp"
#include "plan/errors.hpp"
#include "report/plain_number.hpp"

namespace dtrain::cli {
namespace {

std::string refusal(const CLI::App& cmd, const std::string& name, const std::string& expected,
                    const std::string& value) {
  return "dtrain: " + cmd.get_name() + ": " + name + ": expected " + expected + ", got " +
         (value.empty() ? std::string("an empty value")
                        : "\"" + plan::escape_for_message(value, "\"\\") + "\"");
}

}  // namespace

CLI::Option* add_whole_number_flag(CLI::App& cmd, const std::string& name,
                                   std::function<void(long long)> store, long long min,
                                   long long max, const std::string& help) {
  const CLI::App* app = &cmd;
  return cmd.add_option_function<std::string>(
      name,
      [app, name, store = std::move(store), min, max](const std::string& text) {
        const auto value = parse_whole_number(text, min, max);
        if (!value) {
          throw CLI::ValidationError(refusal(
              *app, name, "an integer from " + std::to_string(min) + " to " + std::to_string(max),
              text));
        }
        store(*value);
      },
      help);
}

CLI::Option* add_decimal_number_flag(CLI::App& cmd, const std::string& name, double& out,
                                     double min, double max, const std::string& help) {
  const CLI::App* app = &cmd;
  return cmd.add_option_function<std::string>(
      name,
      [app, name, &out, min, max](const std::string& text) {
        const auto value = parse_decimal_number(text, min, max);
        if (!value) {
          throw CLI::ValidationError(refusal(*app, name,
                                             "a decimal number from " + report::plain_number(min) +
                                                 " to " + report::plain_number(max),
                                             text));
        }
        out = *value;
      },
      help);
}

CLI::Option* add_file_flag(CLI::App& cmd, const std::string& name, std::string& out,
                           const std::string& what, const std::string& help) {
  const CLI::App* app = &cmd;
  return cmd.add_option_function<std::string>(
      name,
      [app, name, what, &out](const std::string& text) {
        if (text.empty()) throw CLI::ValidationError(refusal(*app, name, what, text));
        out = text;
      },
      help);
}

std::string usage_error_text(const std::string& command, const std::string& cli_text) {
  if (cli_text.rfind("dtrain: ", 0) == 0) return cli_text;
  const std::string dtrain = command.empty() ? "dtrain" : "dtrain " + command;
  std::string text = cli_text;
  while (!text.empty() && (text.back() == '\n' || text.back() == '.')) text.pop_back();
  return "dtrain: " + (command.empty() ? "" : command + ": ") + text + "; see " + dtrain +
         " --help";
}

}  // namespace dtrain::cli
