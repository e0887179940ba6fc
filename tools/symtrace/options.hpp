#pragma once
// The command line: parsing, the help texts, and input shapes (`1x3x224x224`).

#include <symtrace/symtrace.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace::cli {

/// What the command line asks for.
struct Options {
  std::string command;              ///< zoo, trace, report, check, ops, analyze or prune; empty when none was given
  std::string model;                ///< the MODEL argument
  std::vector<std::string> inputs;  ///< each --input, as written
  std::vector<std::string> dims;    ///< each --dim, as written (NAME=LO..HI)
  /// The ranges --dim gives the named dims of --input shapes, read from `dims`.
  std::vector<std::pair<std::string, SymRange>> dim_ranges;
  std::string at;                ///< analyze --at, as written (N=8,H=224)
  SymBindings at_values;         ///< the values --at gives the named dims
  std::string format = "text";   ///< --format
  std::string output;            ///< -o FILE; empty: standard output (prune: see pruned_file)
  double amount = 0.0;           ///< prune --amount: the fraction of each group's channels to cut
  std::string criterion = "l1";  ///< prune --criterion: l1 or l2
  std::string plan;              ///< prune --plan FILE: the channels to keep per group, instead of --amount
  bool check_pruned = false;     ///< prune --check: run the pruned file in LibTorch against the masked original
  std::string pruned_file;       ///< prune -o FILE: the pruned TorchScript file (its report goes to standard output)
  double tolerance = 1e-5;       ///< check --tolerance: the largest relative error accepted
  bool by_execution = false;     ///< report --by-execution: capture failed modules by execution
  bool training = false;         ///< ops --training: also run the model in training mode
  bool against_torch = false;    ///< check --against-torch: also compare with LibTorch's forward
  bool help = false;             ///< --help
  bool version = false;          ///< --version
};

/// Bad usage: a one-line message saying what was wrong and how to fix it, and the command
/// whose help applies ("" for the program's).
class UsageError : public std::runtime_error {
 public:
  UsageError(std::string command, const std::string& message)
      : std::runtime_error(message), command_(std::move(command)) {}
  [[nodiscard]] const std::string& command() const noexcept { return command_; }

 private:
  std::string command_;
};

/// Parses `args` (without the program name); throws UsageError.
[[nodiscard]] Options parse_options(const std::vector<std::string>& args);

/// The help text of `command`, or of the program for "".
[[nodiscard]] std::string help_text(std::string_view command);

/// Reads `--input` text: sizes separated by `x` (`1x3x224x224`), `?` for an unknown size.
/// Throws UsageError naming what is wrong for `command`.
[[nodiscard]] Shape parse_shape(std::string_view text, const Options& options);

}  // namespace symtrace::cli
