#pragma once
// The `symtrace` program as a function, so that tests run it in-process as well as through
// the executable (main.cpp). See help_text() in options.cpp for the commands.

#include <iosfwd>
#include <string>
#include <vector>

namespace symtrace::cli {

/// Exit codes (documented in the README).
enum ExitCode : int {
  exit_ok = 0,
  exit_problem = 1,
  exit_usage = 2
};

/// Runs the program on `args` (without the program name). Results go to `out` (or to the
/// file given with -o), messages and progress to `err`. Returns the exit code: 0 done, 1 the
/// job found a problem (a model that cannot be traced whole, a check mismatch), 2 bad usage
/// or input.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace symtrace::cli
