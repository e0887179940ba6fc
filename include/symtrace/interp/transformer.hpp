#pragma once
/// \file
/// `Transformer`: an Interpreter that builds a new graph as it runs (torch.fx's
/// `Transformer`). The graph is run on symbolic inputs under a trace, so every hook's result
/// is recorded: a subclass that overrides a hook changes what the new graph computes.
///
///     struct ReluToGelu : symtrace::Transformer {   // every relu becomes a gelu
///       using Transformer::Transformer;
///       symtrace::Value call_function(std::string_view target, symtrace::ValueList args,
///                                     symtrace::KeywordValues kwargs) override {
///         return Transformer::call_function(target == "relu" ? "gelu" : target, std::move(args),
///                                           std::move(kwargs));
///       }
///       // and call_method alike, for x.relu()
///     };
///     symtrace::Graph g = ReluToGelu(model, graph).transform();
///
/// What the new graph holds:
/// - placeholders for the graph's placeholders, named after the module's forward inputs (as a
///   trace names them), with the same dtypes and shapes; inputs specialised by concrete_args
///   keep their values and guards;
/// - ops recorded where the hooks run them, with the file:line and module scope of the node
///   being run;
/// - every `call_module` again as one `call_module` node (the module is not traced into,
///   whatever its type: the graph already chose it as a leaf), with the result metadata of the
///   node it comes from while its arguments' metadata is unchanged, and the `failure` entry of
///   a module that could not be traced;
/// - parameters and buffers as `get_attr` nodes where they are used (one per use, as when
///   tracing), graph constants as constants of the new graph;
/// - `cond` nodes recorded again by `cond`, each branch run by a plain Interpreter of its
///   subgraph.

#include "symtrace/interp/interpreter.hpp"

#include <source_location>

namespace symtrace {

/// Runs a graph symbolically and records what its hooks do as a new graph; see the file
/// comment. Borrows the module and the graph.
class Transformer : public Interpreter {
 public:
  using Interpreter::Interpreter;

  /// Runs the graph on symbolic inputs made from its placeholders and returns the graph
  /// recorded; it lints. Throws TraceError when a hook's result cannot be traced,
  /// InterpreterError when a node fails otherwise, and std::invalid_argument when the graph's
  /// placeholders do not match the module's forward or a placeholder has no dtype.
  Graph transform(std::source_location where = std::source_location::current());

  /// Records `cond` again when its predicate is symbolic; otherwise as Interpreter does.
  Value call_function(std::string_view target, ValueList args, KeywordValues kwargs) override;
};

}  // namespace symtrace
