// Output: the result of a command to standard output or a file; SVG through graphviz's dot.
#include "output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

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

/// The path of `program` on PATH, or "".
std::string find_on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::string_view rest = path;
  while (!rest.empty()) {
    std::size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

/// A file removed when this goes out of scope.
struct TemporaryFile {
  fs::path path;
  TemporaryFile() {
    std::random_device random;
    path = fs::temp_directory_path() / fmt::format("symtrace-{:08x}{:08x}.dot", random(), random());
  }
  ~TemporaryFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
};

}  // namespace

Output::Output(const Options& options, std::ostream& out) : command_(options.command), path_(options.output), out_(out) {
  if (!path_.empty()) check_writable(path_, command_);
  if (options.format == "svg") {
    dot_program_ = find_on_path("dot");
    if (dot_program_.empty()) {
      throw UsageError(command_, "the svg format needs graphviz's dot, which is not on PATH; install graphviz "
                                 "(apt install graphviz) or use --format dot");
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
  TemporaryFile input;
  {
    std::ofstream file(input.path, std::ios::binary);
    file << dot;
    file.close();
    if (!file) throw std::runtime_error(fmt::format("writing '{}' failed", input.path.string()));
  }
  std::string command = fmt::format("'{}' -Tsvg '{}' 2>&1", dot_program_, input.path.string());
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error(fmt::format("running '{}' failed: {}", dot_program_, std::strerror(errno)));
  std::string svg;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) svg.append(buffer, n);
  int status = ::pclose(pipe);
  if (status != 0) {
    throw std::runtime_error(fmt::format("graphviz's dot could not draw the graph (status {}): {}", status, svg));
  }
  write(svg);
}

}  // namespace symtrace::cli
