#pragma once
/// \file
/// Ordering ops: topk, sort, unique.
///
/// Schemas:
/// - `topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> Tensor[]`:
///   the k largest (or smallest) elements along `dim` and their int64 indices, best first
///   (NaN counts as the largest, as in PyTorch). Equal values come in the order LibTorch's CPU
///   kernel gives them (Note [Ties as LibTorch orders them] in src/ops/sorting.cpp). `k` may
///   be a size known only when run (`sym_min(k, n)`): the traced output dim is then unknown.
/// - `sort(Tensor self, int dim=-1, bool descending=False, bool stable=False) -> Tensor[]`: the
///   values along `dim` in order and their int64 indices, NaN the largest; equal values keep
///   their order when `stable`, else come as LibTorch's sort gives them.
/// - `unique_sorted(Tensor self, bool return_inverse=False, bool return_counts=False) ->
///   Tensor[]`: `aten::_unique2(self, sorted=True, ...)`: the distinct values, ascending, of the
///   flattened tensor; the inverse (for each element, the index of its value; self's shape);
///   the counts of each value. How many values there are depends on the data: traced, that dim
///   is unknown (`[?]`). As PyTorch 1.13's CPU kernel, the inverse is computed when either the
///   inverse or the counts are asked for; an output not computed is an empty int64 [0]. Each
///   NaN is a value of its own, after the numbers (PyTorch 1.13's CPU kernel leaves NaNs
///   unordered); -0.0 and 0.0 are one value, the first in the input.

#include "symtrace/core/sym_int.hpp"
#include "symtrace/core/tensor.hpp"

#include <source_location>
#include <tuple>
#include <utility>

namespace symtrace {

using Where = std::source_location;

/// (values, indices) of the `k` largest (`largest`) or smallest elements of `x` along `dim`.
std::pair<Tensor, Tensor> topk(const Tensor& x, const SymInt& k, std::int64_t dim = -1, bool largest = true,
                               bool sorted = true, Where where = Where::current());

/// (values, indices) of `x` sorted along `dim`, ascending unless `descending`; equal values in
/// their order when `stable`.
std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim = -1, bool descending = false, bool stable = false,
                               Where where = Where::current());

/// (values, inverse, counts) of `x`'s distinct values, ascending: `torch.unique(x, sorted=True,
/// return_inverse, return_counts)`.
std::tuple<Tensor, Tensor, Tensor> unique_sorted(const Tensor& x, bool return_inverse = false,
                                                 bool return_counts = false, Where where = Where::current());

}  // namespace symtrace
