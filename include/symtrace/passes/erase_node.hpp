#pragma once
/// \file
/// `graph_erase_node`: removes a node together with the chain of inputs that only it consumed.

#include "symtrace/graph/graph.hpp"

#include <cstddef>
#include <source_location>

namespace symtrace {

/// Removes `node` and, recursively, every node it used that has no other user and no side
/// effect (placeholders, impure nodes and in-place ops stay), as experimental-experiment's
/// `CustomTracer.graph_erase_node` does for the chain of a dropped slice.
/// Given: `node` is a node of `graph` without users (else std::invalid_argument naming it and
/// its users, and nothing changes). Result: the number of nodes removed (at least 1).
std::size_t graph_erase_node(Graph& graph, Node& node, std::source_location where = std::source_location::current());

}  // namespace symtrace
