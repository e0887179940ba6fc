#pragma once
// The program's commands. Each writes its result to `output`, messages to `err`, and returns
// the exit code; bad usage throws UsageError (cli.cpp prints it with the command's help).

#include "cli.hpp"
#include "options.hpp"
#include "output.hpp"

#include <iosfwd>

namespace symtrace::cli {

/// Runs the command `options.command` (one of the table in options.cpp).
int run_command(const Options& options, Output& output, std::ostream& err);

/// `symtrace zoo`: the models, their parameter counts and descriptions.
int zoo_command(const Options& options, Output& output);
/// `symtrace trace MODEL`: the symbolic graph; exit 1 when the model cannot be traced whole.
int trace_command(const Options& options, Output& output, std::ostream& err);
/// `symtrace report MODEL`: recursive_trace and its coverage report.
int report_command(const Options& options, Output& output, std::ostream& err);
/// `symtrace check MODEL`: the traced graph run against the eager forward; exit 1 on mismatch.
int check_command(const Options& options, Output& output, std::ostream& err);
/// `symtrace ops MODEL`: the ops a run of the model calls, in inference (and training).
int ops_command(const Options& options, Output& output, std::ostream& err);
/// `symtrace analyze MODEL`: the summary table (parameters, MACs) and the pruning groups.
int analyze_command(const Options& options, Output& output, std::ostream& err);
/// `symtrace prune MODEL --amount A`: channel pruning, and the pruned TorchScript file (-o).
int prune_command(const Options& options, Output& output, std::ostream& err);

}  // namespace symtrace::cli
