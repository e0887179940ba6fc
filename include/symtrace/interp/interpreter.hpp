#pragma once
/// \file
/// `Interpreter`: runs a graph on concrete (or symbolic) values, node by node, as torch.fx's
/// `Interpreter` does. Placeholders take the inputs in order; `get_attr` reads the module's
/// parameter or buffer; `call_function` / `call_method` call the op of that name (`getitem`
/// picks an element of a list result); `call_module` calls the real submodule; `output`
/// gives the result. Values are dropped after their last use, so peak memory follows the
/// graph's live values, not its size. A `get_attr` of a graph constant (`_tensor_constant0`)
/// reads the graph's constant.
///
///     symtrace::Graph g = symtrace::symbolic_trace(model, {x});
///     symtrace::Tensor y = symtrace::Interpreter(model, g).run({x}).to_tensor();  // == model(x)
///
/// An error while running a node is rethrown as `InterpreterError`, whose message is the
/// original message followed by "While executing %add_3 : ... = call_function[target=add](...)",
/// with the original exception nested (std::rethrow_if_nested reaches it). A TraceError (the
/// graph is being traced through) passes unchanged.

#include "symtrace/core/error.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/graph/graph.hpp"

#include <string>

namespace symtrace {

class Module;

/// An error raised while interpreting a graph; names the node being executed.
class InterpreterError : public Error {
 public:
  InterpreterError(const std::string& message, std::string node) : Error(message), node_(std::move(node)) {}
  /// The name of the node whose execution failed.
  [[nodiscard]] const std::string& node() const noexcept { return node_; }

 private:
  std::string node_;
};

/// Runs `graph` against `module` (the module the graph was traced from, or one with the same
/// submodules and tensors); see the file comment. Borrows both.
class Interpreter {
 public:
  Interpreter(Module& module, const Graph& graph) noexcept : module_(module), graph_(graph) {}

  /// Runs the graph on `inputs` (one per placeholder) and returns the output node's value.
  /// Inputs are checked against what the trace assumed (the graph's guards): an input
  /// specialised by concrete_args must have that value; a tensor input must have the
  /// placeholder's dtype, rank and every dim the trace knew. Throws std::invalid_argument
  /// for a wrong count or a broken guard, InterpreterError when a node fails.
  Value run(const ValueList& inputs, std::source_location where = std::source_location::current());

 private:
  Module& module_;
  const Graph& graph_;
};

}  // namespace symtrace
