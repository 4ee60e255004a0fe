// The only code that writes shell text. Templates are data (templates/*.tmpl) with {{name}}
// placeholders; every user-provided string reaches a script through shell_quote().
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::plan {

// One shell word that the shell reads back verbatim: safe words stay bare for readability,
// anything else is single-quoted with embedded quotes spliced as '\''.
std::string shell_quote(std::string_view word);

// A shell variable name: letters, digits and '_', not starting with a digit.
bool is_shell_name(std::string_view name);

// `export NAME=VALUE` with the value quoted. A name that is not is_shell_name() is a bug in the
// caller (the spec and profile readers refuse them) and throws std::logic_error.
std::string shell_export(std::string_view name, std::string_view value);

// `export NAME=DIR1:DIR2"${NAME:+:$NAME}"`: the directories before the variable's value in the
// job, without an empty entry (which would mean the working directory) when it had none.
std::string shell_prepend_path(std::string_view name, const std::vector<std::string>& dirs);

// Words joined by spaces, each quoted.
std::string shell_join(const std::vector<std::string>& words);

// Replaces each {{key}} in `tmpl`; a placeholder without a value, or a value without a
// placeholder, is a bug in the caller and throws std::logic_error naming it.
std::string render_template(std::string_view tmpl,
                            const std::map<std::string, std::string>& values);

}  // namespace dtrain::plan
