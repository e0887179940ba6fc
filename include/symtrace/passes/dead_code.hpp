#pragma once
/// \file
/// Dead code elimination that also knows what the op registry knows about side effects.

#include "symtrace/graph/graph.hpp"

#include <cstddef>

namespace symtrace {

/// True when removing `node` could change what running the graph does: `Node::is_impure()`
/// (placeholders, the output, in-place targets, nodes marked impure), and calls of ops the
/// registry flags as in-place, random or writing to their arguments (batch_norm in training).
[[nodiscard]] bool has_side_effects(const Node& node) noexcept;

/// Removes every node whose result is unused and that has no side effects, in one backward
/// pass (so chains of dead nodes go at once); returns the number removed.
std::size_t eliminate_dead_code(Graph& graph);

}  // namespace symtrace
