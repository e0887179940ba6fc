#pragma once
/// \file
/// `dot_escape`: text made safe inside a double-quoted Graphviz DOT string, the one escaper
/// behind every DOT symtrace writes (`to_dot`'s labels, the program's module hierarchy).

#include <string>
#include <string_view>

namespace symtrace {

/// Appends `text` escaped for a double-quoted DOT string: backslash and double quote escaped,
/// a newline as DOT's `\n` line break, other control characters as spaces.
void append_dot_escaped(std::string& out, std::string_view text);

/// `text` escaped as append_dot_escaped does.
[[nodiscard]] std::string dot_escape(std::string_view text);

}  // namespace symtrace
