#pragma once
// The symtrace program's commands run in-process (tools/symtrace's library), for the tests
// that check a command's output, messages and exit code.

#include "cli.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace symtrace::testing {

/// What a command printed and returned.
struct CliRun {
  int code = -1;
  std::string out, err;
};

/// Runs `symtrace ARGS...`.
inline CliRun run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliRun r;
  r.code = cli::run(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace symtrace::testing
