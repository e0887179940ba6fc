#pragma once
/// \file
/// The named dims of a graph's inputs (docs/design.md, decision 13), bound to the sizes of the inputs of
/// one run, and the graph's size guards checked against them. The interpreter does both before
/// it runs a graph; analyses use the bindings to evaluate shapes and costs for given sizes.
///
///     // a graph traced with x: float32[N, 3, H, W], with the guard H % 32 == 0
///     SymBindings b = bind_input_dims(graph, {Shape{8, 3, 224, 224}});   // N = 8, H = 224, W = 224
///     check_size_guards(graph, b);                                         // 224 % 32 == 0: fine

#include "symtrace/core/shape.hpp"
#include "symtrace/core/sym_expr.hpp"

#include <optional>
#include <source_location>
#include <vector>

namespace symtrace {

class Graph;

/// Binds each named dim of the graph's placeholders to the size the input of the same position
/// in `shapes` has there (one entry per placeholder, in order; nullopt for an input that is no
/// tensor, or is not checked). Throws std::invalid_argument at `where`, naming the input and
/// dim, when a size is outside its dim's range, when one name gets two sizes, or when a dim
/// traced as an expression of bound names has another size.
[[nodiscard]] SymBindings bind_input_dims(const Graph& graph, const std::vector<std::optional<Shape>>& shapes,
                                          std::source_location where = std::source_location::current());

/// Checks every size guard of `graph` whose dims `bindings` binds; throws std::invalid_argument
/// at `where` naming the first broken guard, the values of its dims, and the file:line that
/// recorded it.
void check_size_guards(const Graph& graph, const SymBindings& bindings,
                       std::source_location where = std::source_location::current());

}  // namespace symtrace
