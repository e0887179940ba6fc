// Output: the result of a command to standard output or a file; SVG through graphviz's dot.
#include "output.hpp"

#include <symtrace/export/graphviz.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <system_error>

namespace symtrace::cli {
namespace {

namespace fs = std::filesystem;

/// Throws UsageError unless `path` can be written: an existing file is opened for appending
/// (which changes nothing); a new one is created and removed again.
void check_writable(const std::string& path, const std::string& command) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw UsageError(command, fmt::format("cannot write '{}': it is a directory; give a file name with -o", path));
  }
  const bool existed = fs::exists(path, ec);
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) {
    throw UsageError(command, fmt::format("cannot write '{}': {}; give -o a path in a writable directory", path,
                                          std::strerror(errno)));
  }
  std::fclose(f);
  if (!existed) fs::remove(path, ec);
}

}  // namespace

Output::Output(const Options& options, std::ostream& out) : command_(options.command), path_(options.output), out_(out) {
  if (!path_.empty()) check_writable(path_, command_);
  if (options.format == "svg" || options.format == "html") {
    dot_program_ = find_dot_program();
    if (dot_program_.empty()) {
      throw UsageError(command_, fmt::format("the {} format needs graphviz's dot, which is not on PATH; install "
                                             "graphviz (apt install graphviz){}",
                                             options.format, options.format == "svg" ? " or use --format dot" : ""));
    }
  }
}

void Output::write(std::string_view text) {
  if (path_.empty()) {
    out_ << text;
    out_.flush();
    if (!out_) throw std::runtime_error("writing to standard output failed");
    return;
  }
  std::ofstream file(path_, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) throw std::runtime_error(fmt::format("writing '{}' failed: {}", path_, std::strerror(errno)));
}

void Output::write_svg(const std::string& dot) {
  std::string drawing = run_dot(dot_program_, dot, "svg");
  if (!(drawing.starts_with("<?xml") || drawing.starts_with("<svg")))
    throw std::runtime_error("graphviz's dot wrote no SVG drawing");
  write(drawing);
}

}  // namespace symtrace::cli
