#pragma once
/// \file
/// `cond`: control flow that stays in the graph (docs/design.md, decision 2). Eagerly it runs one
/// branch; traced with a symbolic predicate it traces both branches into subgraphs owned by
/// the graph and records one node that picks between them when the graph runs:
///
///     Tensor y = cond(x.sum() > 0,
///                     [](const TensorList& in) { return in[0].relu(); },
///                     [](const TensorList& in) { return in[0].neg(); },
///                     {x}).to_tensor();
///     // %true_graph_0 = get_attr[target=true_graph_0]
///     // %false_graph_0 = get_attr[target=false_graph_0]
///     // %cond = call_function[target=higher_order.cond](args = (%gt, %true_graph_0, %false_graph_0, [%x]), ...)
///     // %getitem = call_function[target=getitem](args = (%cond, 0), ...)
///
/// As in torch.cond, a branch gets its tensors through `operands` only: a symbolic tensor of
/// the enclosing code captured by a branch is a TraceError. Both branches must return the same
/// structure (a tensor, or a list of as many tensors) with the same dtypes and ranks; sizes
/// that differ between the branches are unknown in the result.

#include "symtrace/core/tensor.hpp"
#include "symtrace/core/thread_context.hpp"
#include "symtrace/core/value.hpp"

#include <source_location>

namespace symtrace {

/// The target of the nodes `cond` records.
inline constexpr std::string_view cond_target = "higher_order.cond";

/// Runs `then_fn(operands)` when `pred` is true, else `else_fn(operands)`. `pred` is a bool
/// tensor with one element; a branch is a `CondBranch` (core/thread_context.hpp). A concrete
/// `pred` just branches (also during a trace: the branch taken is traced inline); a symbolic one
/// goes to this thread's interposer, and the trace records both branches (see the file comment).
/// Throws std::invalid_argument for a bad `pred` or undefined operands, TraceError when a
/// branch cannot be traced or the branches disagree.
Value cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn, const TensorList& operands,
           std::source_location where = std::source_location::current());

}  // namespace symtrace
