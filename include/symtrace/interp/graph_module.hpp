#pragma once
/// \file
/// `GraphModule`: a graph and the modules and tensors it reads, usable like any other module
/// (torch.fx's GraphModule). Calling it runs the graph with the Interpreter; it can be a
/// child of another module, and tracing through it records the graph's operations again.
///
///     auto gm = std::make_shared<symtrace::GraphModule>(model, symtrace::symbolic_trace(*model, {x}));
///     symtrace::Tensor y = gm->call({x}).to_tensor();   // == model->call({x})

#include "symtrace/graph/graph.hpp"
#include "symtrace/nn/module.hpp"

#include <memory>
#include <string>

namespace symtrace {

/// A module whose forward is a graph; see the file comment.
class GraphModule : public Module {
 public:
  /// Takes `root`'s children, own parameters and own buffers under their names (shared, not
  /// copied), so every `call_module` and `get_attr` target of `graph` resolves here, and
  /// one input per placeholder, named after it. Throws std::invalid_argument when a target
  /// of the graph does not resolve in `root`, or the graph fails lint.
  GraphModule(const std::shared_ptr<Module>& root, Graph graph, std::string type_name = "GraphModule",
              Where where = Where::current());

  /// Runs the graph on `args` (one per placeholder).
  Value forward_values(const ValueList& args) override;

  [[nodiscard]] const Graph& graph() const noexcept { return graph_; }

 private:
  Graph graph_;
};

}  // namespace symtrace
