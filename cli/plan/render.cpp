#include "plan/render.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace dtrain::plan {

std::string shell_quote(std::string_view word) {
  auto is_safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '+' || c == '@' ||
           c == '%' || c == '=';
  };
  bool safe = !word.empty() && word.front() != '=';
  for (char c : word) safe = safe && is_safe(c);
  if (safe) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool is_shell_name(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string shell_export(std::string_view name, std::string_view value) {
  if (!is_shell_name(name)) {
    throw std::logic_error("dtrain: template: not a variable name: " + shell_quote(name));
  }
  return "export " + std::string(name) + "=" + shell_quote(value) + "\n";
}

std::string shell_prepend_path(std::string_view name, const std::vector<std::string>& dirs) {
  std::string joined;
  for (const auto& dir : dirs) joined += (joined.empty() ? "" : ":") + dir;
  std::string line = shell_export(name, joined);
  line.pop_back();  // the newline, to add the old value after the new directories
  const std::string var(name);
  return line + "\"${" + var + ":+:$" + var + "}\"\n";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

std::string render_template(std::string_view tmpl,
                            const std::map<std::string, std::string>& values) {
  std::string out;
  std::set<std::string> used;
  std::size_t pos = 0;
  while (pos < tmpl.size()) {
    std::size_t open = tmpl.find("{{", pos);
    if (open == std::string_view::npos) {
      out.append(tmpl.substr(pos));
      break;
    }
    std::size_t close = tmpl.find("}}", open + 2);
    if (close == std::string_view::npos) {
      throw std::logic_error("dtrain: template: unterminated placeholder at offset " +
                             std::to_string(open));
    }
    out.append(tmpl.substr(pos, open - pos));
    std::string key(tmpl.substr(open + 2, close - open - 2));
    auto it = values.find(key);
    if (it == values.end()) {
      throw std::logic_error("dtrain: template: no value for placeholder {{" + key + "}}");
    }
    used.insert(key);
    out += it->second;
    pos = close + 2;
  }
  for (const auto& [key, value] : values) {
    if (!used.count(key)) {
      throw std::logic_error("dtrain: template: value for {{" + key + "}} has no placeholder");
    }
  }
  return out;
}

}  // namespace dtrain::plan
