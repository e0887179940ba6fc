// run(): the program's entry point (see cli.hpp): parse, dispatch, turn errors into exit codes.
#include "cli.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "output.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <exception>
#include <ostream>
#include <stdexcept>

namespace symtrace::cli {
namespace {

int usage_error(const UsageError& e, std::ostream& err) {
  const std::string& command = e.command();
  fmt::print(err, "symtrace{}{}: error: {}\n\n{}", command.empty() ? "" : " ", command, e.what(), help_text(command));
  return exit_usage;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Options options;
  try {
    options = parse_options(args);
  } catch (const UsageError& e) {
    return usage_error(e, err);
  }
  if (options.help) {
    fmt::print(out, "{}", help_text(options.command));
    return exit_ok;
  }
  if (options.version) {
    fmt::print(out, "symtrace {}\n", SYMTRACE_VERSION);
    return exit_ok;
  }
  if (options.command.empty()) {
    // The main job on its embedded default: the robust fallback, visible at once.
    options.command = "report";
    options.model = "mixed_failures";
    fmt::print(err, "symtrace: no command given, so here is `symtrace report mixed_failures` "
                    "(`symtrace --help` lists the commands)\n\n");
    err.flush();
  }
  const std::string& command = options.command;
  try {
    Output output(options, out);
    return run_command(options, output, err);
  } catch (const UsageError& e) {
    return usage_error(e, err);
  } catch (const std::invalid_argument& e) {
    // Input the model refuses (an --input shape its layers do not accept, ...).
    fmt::print(err, "symtrace {}: error: {}\n", command, e.what());
    return exit_usage;
  } catch (const std::exception& e) {
    fmt::print(err, "symtrace {}: {}\n", command, e.what());
    return exit_problem;
  }
}

}  // namespace symtrace::cli
