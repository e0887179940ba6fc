#pragma once
// `symtrace report --format dot|svg`: the module hierarchy of a GraphCollection as Graphviz
// DOT, one box per module coloured by status, an edge from each parent to each child.

#include <symtrace/symtrace.hpp>

#include <string>
#include <string_view>

namespace symtrace::cli {

/// Graphviz DOT of `collection.hierarchy()`: each module labelled with its path (the model:
/// `model`), type and status (a failed one with its file:line, a traced one with its graph's
/// node count), filled by status (traced green, leaf blue, failed red, unvisited grey).
[[nodiscard]] std::string hierarchy_dot(const GraphCollection& collection, std::string_view model);

}  // namespace symtrace::cli
