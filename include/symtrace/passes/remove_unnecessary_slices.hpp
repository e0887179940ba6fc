#pragma once
/// \file
/// `remove_unnecessary_slices`: drops slices that keep the whole tensor.

#include "symtrace/graph/graph.hpp"

#include <cstddef>

namespace symtrace {

/// Replaces every `slice(x, dim, start, end, step)` that selects all of `x` along `dim` (start
/// None or 0, end None or at least the size of that dim, step 1) by `x` and erases it; returns
/// the number removed. A slice whose end is not a constant, or whose dim size is unknown when
/// the end is finite, is kept. A slice something writes into in place (`copy_`) is kept too:
/// dropping it would change what the write changes.
std::size_t remove_unnecessary_slices(Graph& graph);

}  // namespace symtrace
