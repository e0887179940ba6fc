// Output: the result of a command to standard output or a file; SVG through graphviz's dot.
#include "output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <random>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

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

/// A unique path in the temporary directory, removed when this goes out of scope.
struct TemporaryFile {
  fs::path path;
  explicit TemporaryFile(std::string_view extension) {
    std::random_device random;
    path = fs::temp_directory_path() / fmt::format("symtrace-{:08x}{:08x}{}", random(), random(), extension);
  }
  ~TemporaryFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
};

/// The contents of `path` ("" when it cannot be read).
std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

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
  TemporaryFile input(".dot");
  TemporaryFile svg(".svg");
  TemporaryFile messages(".log");
  {
    std::ofstream file(input.path, std::ios::binary);
    file << dot;
    file.close();
    if (!file) throw std::runtime_error(fmt::format("writing '{}' failed", input.path.string()));
  }
  // dot writes the drawing to a file of its own and its messages to another, so that a
  // warning can never end up inside the SVG. No shell: the arguments go as they are.
  pid_t pid = 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, messages.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::string in = input.path.string();
  std::string out = "-o" + svg.path.string();
  std::string format = "-Tsvg";
  char* argv[] = {dot_program_.data(), format.data(), in.data(), out.data(), nullptr};
  int spawned = posix_spawn(&pid, dot_program_.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    throw std::runtime_error(fmt::format("running '{}' failed: {}", dot_program_, std::strerror(spawned)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string drawing = read_text(svg.path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !(drawing.starts_with("<?xml") || drawing.starts_with("<svg"))) {
    throw std::runtime_error(fmt::format("graphviz's dot could not draw the graph ({}): {}",
                                         WIFEXITED(status) ? fmt::format("exit code {}", WEXITSTATUS(status))
                                                           : std::string("killed by a signal"),
                                         read_text(messages.path)));
  }
  write(drawing);
}

}  // namespace symtrace::cli
