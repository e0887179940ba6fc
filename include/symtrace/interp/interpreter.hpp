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
#include "symtrace/ops/dispatch.hpp"

#include <string>
#include <string_view>
#include <vector>

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
///
/// As in torch.fx, each node goes through virtual hooks that a subclass overrides to observe
/// or change what runs: `run_node` fetches the node's arguments and calls the hook named by its
/// op (`placeholder`, `get_attr`, `call_function`, `call_method`, `call_module`, `output`),
/// each of which takes the node's target and its argument values. While a hook runs,
/// `current_node()` is the node being executed (its name, metadata and file:line). The nodes
/// of a `cond` branch run in a plain Interpreter of the branch's subgraph.
///
///     struct Stats : symtrace::Interpreter {       // the mean of every module's output
///       using Interpreter::Interpreter;
///       std::map<std::string, double> mean;
///       symtrace::Value call_module(std::string_view target, symtrace::ValueList args,
///                                   symtrace::KeywordValues kwargs) override {
///         symtrace::Value out = Interpreter::call_module(target, std::move(args), std::move(kwargs));
///         mean[std::string(target)] = out.to_tensor().mean().item<float>();
///         return out;
///       }
///     };
class Interpreter {
 public:
  Interpreter(Module& module, const Graph& graph) noexcept : module_(module), graph_(graph) {}
  virtual ~Interpreter() = default;
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  /// Runs the graph on `inputs` (one per placeholder) and returns the output node's value.
  /// Inputs are checked against what the trace assumed (the graph's guards): an input
  /// specialised by concrete_args must have that value; a tensor input must have the
  /// placeholder's dtype, rank and every dim the trace knew. Throws std::invalid_argument
  /// for a wrong count or a broken guard, InterpreterError when a node fails, and
  /// std::logic_error when this interpreter is already running (one run at a time per
  /// interpreter object; make another for a nested run).
  Value run(const ValueList& inputs, std::source_location where = std::source_location::current());

  // ---- Hooks (fx's names) ----------------------------------------------------------------
  /// Runs one node: fetches its arguments' values and calls the hook of its op.
  virtual Value run_node(const Node& node);
  /// The next input of the run.
  virtual Value placeholder(std::string_view target, ValueList args, KeywordValues kwargs);
  /// The parameter, buffer or graph constant at `target` (a subgraph's name for cond).
  virtual Value get_attr(std::string_view target, ValueList args, KeywordValues kwargs);
  /// The op named `target` called on the arguments (`getitem` picks an element of a list,
  /// `higher_order.cond` runs the branch its predicate picks).
  virtual Value call_function(std::string_view target, ValueList args, KeywordValues kwargs);
  /// The Tensor method named `target`, its first argument the tensor (dispatched as an op).
  virtual Value call_method(std::string_view target, ValueList args, KeywordValues kwargs);
  /// The submodule at `target` called on the (positional) arguments.
  virtual Value call_module(std::string_view target, ValueList args, KeywordValues kwargs);
  /// The graph's result: the output node's argument.
  virtual Value output(std::string_view target, ValueList args, KeywordValues kwargs);

  /// The module the graph runs against.
  [[nodiscard]] Module& module() const noexcept { return module_; }
  /// The graph being run.
  [[nodiscard]] const Graph& graph() const noexcept { return graph_; }
  /// The node being executed, or nullptr outside a run.
  [[nodiscard]] const Node* current_node() const noexcept { return current_; }

 protected:
  /// The value of a node argument in this run (fx's `map_nodes_to_values`): node ids become
  /// the values their nodes produced, lists element-wise. std::invalid_argument for a node
  /// that has no value (outside a run, or not run yet).
  [[nodiscard]] Value value_of(const Argument& argument) const;
  /// The file:line of the node being executed (empty outside a run).
  [[nodiscard]] std::source_location node_location() const noexcept;

 private:
  Module& module_;
  const Graph& graph_;
  std::vector<Value> values_;          // by node id, during a run
  const ValueList* inputs_ = nullptr;  // during a run
  std::size_t next_input_ = 0;
  const Node* current_ = nullptr;
};

}  // namespace symtrace
