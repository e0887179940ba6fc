#pragma once
// Where a command's result goes: standard output, or the file given with -o. The file is
// checked before the job starts, so an unwritable path is reported at once, and written
// whole at the end, so a failed job leaves no half-written file. SVG is drawn, and the HTML
// report's graphs laid out, by graphviz's `dot`, found on PATH before the job starts.

#include "options.hpp"

#include <iosfwd>
#include <string>
#include <string_view>

namespace symtrace::cli {

class Output {
 public:
  /// Throws UsageError when -o names a file that cannot be written, or when the format is
  /// svg or html and graphviz's dot is not on PATH.
  Output(const Options& options, std::ostream& out);

  /// Writes `text` (the whole result). Throws std::runtime_error when writing fails.
  void write(std::string_view text);
  /// Draws `dot` (Graphviz DOT text) as SVG with graphviz's dot and writes it.
  void write_svg(const std::string& dot);
  /// Graphviz's dot, found when the format needs it (svg, html), else "".
  [[nodiscard]] const std::string& dot_program() const noexcept { return dot_program_; }

 private:
  std::string command_;
  std::string path_;
  std::string dot_program_;
  std::ostream& out_;
};

}  // namespace symtrace::cli
