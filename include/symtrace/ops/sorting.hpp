#pragma once
/// \file
/// Ordering ops.
///
/// Schemas:
/// - `topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> Tensor[]`:
///   the k largest (or smallest) elements along `dim` and their int64 indices, best first
///   (NaN counts as the largest, as in PyTorch; equal values keep their order). `k` may be a
///   size known only when run (`sym_min(k, n)`): the traced output dim is then unknown.

#include "symtrace/core/sym_int.hpp"
#include "symtrace/core/tensor.hpp"

#include <source_location>
#include <utility>

namespace symtrace {

using Where = std::source_location;

/// (values, indices) of the `k` largest (`largest`) or smallest elements of `x` along `dim`.
std::pair<Tensor, Tensor> topk(const Tensor& x, const SymInt& k, std::int64_t dim = -1, bool largest = true,
                               bool sorted = true, Where where = Where::current());

}  // namespace symtrace
