#pragma once
/// \file
/// The subgraph rewriter (fx's `subgraph_rewriter.replace_pattern`): find every match of a
/// pattern graph and replace it by a replacement graph.
///
///     // relu(add(a, b)) -> fused_add_relu(a, b)
///     symtrace::Graph pattern, replacement;
///     auto& a = pattern.placeholder("a");
///     auto& b = pattern.placeholder("b");
///     pattern.output(pattern.call_function("relu", {pattern.call_function("add", {a, b})}));
///     auto& ra = replacement.placeholder("a");
///     auto& rb = replacement.placeholder("b");
///     replacement.output(replacement.call_function("fused_add_relu", {ra, rb}));
///     std::size_t n = symtrace::replace_pattern(graph, pattern, replacement);

#include "symtrace/graph/graph.hpp"

#include <cstddef>
#include <source_location>
#include <vector>

namespace symtrace {

/// One match of a pattern in a graph.
struct PatternMatch {
  /// The graph node the pattern's result matched (the one a replacement stands in for).
  Node* anchor = nullptr;
  /// The graph nodes the pattern's operation nodes matched, in pattern order.
  std::vector<Node*> nodes;
  /// The graph node each placeholder of the pattern matched, in placeholder order.
  std::vector<Node*> inputs;
};

/// The non-overlapping matches of `pattern` in `graph`, in graph order. A pattern node matches
/// a graph node with the same op, target, constants and keyword names, whose node arguments
/// match in turn; a placeholder matches any node, the same one wherever it is used. Matched
/// nodes other than the anchor must be used only inside the match (else replacing the match
/// would leave their other users without them), and a node belongs to one match at most.
/// Given: `pattern` has placeholders, at least one other node, and an output returning one of
/// its nodes that is not a placeholder (else std::invalid_argument).
[[nodiscard]] std::vector<PatternMatch> find_pattern(const Graph& graph, const Graph& pattern,
                                                     std::source_location where = std::source_location::current());

/// Replaces every match of `pattern` by a copy of `replacement`'s nodes, its placeholders
/// bound to what the pattern's placeholders matched (by position), and erases the matched
/// nodes; the anchor's users then use the replacement's result, which takes the anchor's
/// tensor metadata, scope and source location. Returns the number of matches replaced.
/// Given: `replacement` has as many placeholders as `pattern` and an output returning one node
/// (else std::invalid_argument, and nothing changes).
std::size_t replace_pattern(Graph& graph, const Graph& pattern, const Graph& replacement,
                            std::source_location where = std::source_location::current());

}  // namespace symtrace
