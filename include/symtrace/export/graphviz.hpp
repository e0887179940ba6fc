#pragma once
/// \file
/// Running Graphviz's `dot` program: the one place symtrace starts it, for SVG drawings and for
/// the layouts of the HTML report. Graphviz is optional at run time: callers find `dot` first
/// and say what to install when it is missing.
///
///     std::string dot = symtrace::find_dot_program();         // "" when graphviz is missing
///     std::string svg = symtrace::run_dot(dot, symtrace::to_dot(graph), "svg");

#include <string>
#include <string_view>

namespace symtrace {

/// The path of graphviz's `dot` on PATH, or "" when it is not there.
[[nodiscard]] std::string find_dot_program();

/// Runs the `dot` program at `program` on `dot_text` (one or more DOT graphs) with
/// `-T<output_format>` and returns what it wrote. No shell is involved, and dot's messages
/// never mix with its output. Throws std::runtime_error naming dot's exit status and messages
/// when it cannot be started or fails.
[[nodiscard]] std::string run_dot(const std::string& program, std::string_view dot_text, std::string_view output_format);

}  // namespace symtrace
