#pragma once
/// \file
/// `remove_inplace`: rewrites in-place ops into their functional form, so the graph is pure
/// (what an exporter to ONNX needs), as experimental-experiment's `CustomTracer.remove_inplace`.

#include "symtrace/graph/graph.hpp"

#include <cstddef>
#include <source_location>

namespace symtrace {

/// Rewrites every in-place op node (an op the registry flags `inplace`: symtrace's `add_`,
/// `relu_`, `index_put_`, ..., and LibTorch's in-place operators a TorchScript file calls,
/// `aten::clamp_`, `aten::add_.Tensor`) into the functional op that computes the value it leaves
/// in its first argument, and makes every later use of that argument use the new node
/// instead. The functional op is the registry's op of the same name without the trailing `_`
/// and with the same arguments (`aten::add_.Tensor` -> `aten::add.Tensor`); `fill_` becomes
/// `full`, and `copy_` the source cast and broadcast to the target. A write into a slice of a tensor
/// (`x.slice(...).copy_(y)`, slice assignment) becomes a `slice_scatter` of the tensor, which
/// later uses of the tensor read. Returns the number of in-place nodes removed.
///
/// Refuses (std::invalid_argument naming the node and why, graph unchanged: the pass is
/// transactional) where aliasing makes the rewrite unsound: a write into a graph input or a
/// parameter or buffer (the change outlives the graph), through a view other than one slice
/// while the viewed tensor is used afterwards, or while another view of the same tensor made
/// before the write is used after it; also a `fill_` or `copy_` whose target shape is unknown,
/// an op without a functional form in the registry, and a floating-point operand written into
/// an integer tensor (the in-place op casts it back; the functional op would not).
/// Views are known from the op registry (and reshape, flatten, contiguous and to, which may
/// return their input or a view of it); a `call_module` result is taken as a new tensor, so a
/// leaf module that returns a view of its input is not seen as an alias.
std::size_t remove_inplace(Graph& graph, std::source_location where = std::source_location::current());

}  // namespace symtrace
