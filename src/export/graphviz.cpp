// Running graphviz's dot: the input in a temporary file, the output in another, its messages
// in a third, so that a warning can never end up inside the drawing. posix_spawn, no shell:
// the arguments go as they are.
#include "symtrace/export/graphviz.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace symtrace {
namespace {

namespace fs = std::filesystem;

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

std::string find_dot_program() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::string_view rest = path;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / "dot";
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

std::string run_dot(const std::string& program, std::string_view dot_text, std::string_view output_format) {
  TemporaryFile input(".dot");
  TemporaryFile output(".out");
  TemporaryFile messages(".log");
  {
    std::ofstream file(input.path, std::ios::binary);
    file << dot_text;
    file.close();
    if (!file) throw std::runtime_error(fmt::format("writing '{}' failed", input.path.string()));
  }
  pid_t pid = 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Standard output, not -o: with -o, dot writes each graph of a file over the one before.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, messages.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string program_arg = program;
  std::string format = fmt::format("-T{}", output_format);
  std::string in = input.path.string();
  char* argv[] = {program_arg.data(), format.data(), in.data(), nullptr};
  const int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error(fmt::format("running '{}' failed: {}", program, std::strerror(spawned)));
  int status = 0;
  pid_t waited = 0;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited < 0) throw std::runtime_error(fmt::format("waiting for '{}' failed: {}", program, std::strerror(errno)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(fmt::format("graphviz's dot could not lay out the graph ({}): {}",
                                         WIFEXITED(status) ? fmt::format("exit code {}", WEXITSTATUS(status))
                                                           : std::string("killed by a signal"),
                                         read_text(messages.path)));
  }
  return read_text(output.path);
}

}  // namespace symtrace
