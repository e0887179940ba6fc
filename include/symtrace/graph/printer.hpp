#pragma once
/// \file
/// Printing a graph: torch.fx's readable text form (the canonical form tests compare), a
/// table like fx's `print_tabular`, and Graphviz DOT written by Boost's `write_graphviz`.

#include "symtrace/graph/graph.hpp"

#include <fmt/core.h>

#include <string>

namespace symtrace {

/// fx's text form, with the result's dtype and shape where known:
///
///     graph():
///         %x : float32[1, 3] [num_users=1] = placeholder[target=x]
///         %relu : float32[1, 3] [num_users=1] = call_function[target=relu](args = (%x,), kwargs = {})
///         return relu
///
/// Arguments print as Python would (`None`, `True`, `1.0`, `'text'`, `[1, 2]`), strings quoted;
/// an output that is a list prints as a tuple, `return (a, b)`.
[[nodiscard]] std::string to_string(const Graph& graph);

/// One row per node with the columns opcode, name, target, args, kwargs and meta (dtype and
/// shape), aligned as fx's `print_tabular` aligns them.
[[nodiscard]] std::string to_tabular(const Graph& graph);

/// Options for `to_dot`.
struct DotOptions {
  /// The graph's name in the DOT text.
  std::string name = "graph";
  /// Draw edges from inputs to users left to right instead of top to bottom.
  bool left_to_right = false;
};

/// Graphviz DOT: one vertex per node labelled with its name, opcode, target and shape;
/// placeholders, outputs, `call_module` leaves and failed modules (nodes with a `failure`
/// metadata entry) each have their own shape and colour; one edge per use.
[[nodiscard]] std::string to_dot(const Graph& graph, const DotOptions& options = {});

}  // namespace symtrace

/// Prints `to_string(graph)`.
template <>
struct fmt::formatter<symtrace::Graph> : fmt::formatter<std::string_view> {
  auto format(const symtrace::Graph& graph, format_context& ctx) const -> format_context::iterator;
};
