#pragma once
/// \file
/// Common subexpression elimination over pure nodes.

#include "symtrace/graph/graph.hpp"

#include <cstddef>

namespace symtrace {

/// Replaces every pure node that computes what an earlier node computes (same op, target,
/// arguments and keyword arguments, after earlier replacements) by that earlier node, and
/// erases it; returns the number removed. Pure: `call_function` and `call_method` nodes of ops
/// without side effects (see `has_side_effects`), and `get_attr`. `call_module` nodes are
/// kept: a module may hold state or draw random numbers (dropout). Nodes are merged only
/// when no node between them may write into a tensor (in-place and argument-writing ops,
/// impure nodes, and module calls, whose leaf may work in place): an equal-looking node after
/// a write may read another value.
std::size_t eliminate_common_subexpressions(Graph& graph);

}  // namespace symtrace
