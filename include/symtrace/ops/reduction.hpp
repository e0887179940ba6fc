#pragma once
/// \file
/// Reductions over dims, normalising functions along a dim, and the running sum along a dim.
///
/// Schemas: `sum(Tensor self, int[] dim=[], bool keepdim=False)` (bool/int64 -> int64),
/// `mean(...)` (floating only), `amax(...)` (keeps the dtype), `argmax(Tensor self, int? dim=None,
/// bool keepdim=False)` (int64; over the flattened tensor when dim is None),
/// `softmax(Tensor self, int dim)`, `log_softmax(Tensor self, int dim)` (float32),
/// `cumsum(Tensor self, int dim, *, ScalarType? dtype=None)` (bool/int64 -> int64 unless
/// `dtype` is given).
/// An empty `dim` list reduces over every dim.

#include "symtrace/core/tensor.hpp"

#include <optional>
#include <source_location>

namespace symtrace {

using Where = std::source_location;

Tensor sum(const Tensor& x, const IntList& dims = {}, bool keepdim = false, Where where = Where::current());
Tensor mean(const Tensor& x, const IntList& dims = {}, bool keepdim = false, Where where = Where::current());
Tensor amax(const Tensor& x, const IntList& dims = {}, bool keepdim = false, Where where = Where::current());
Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
              Where where = Where::current());
Tensor softmax(const Tensor& x, std::int64_t dim, Where where = Where::current());
Tensor log_softmax(const Tensor& x, std::int64_t dim, Where where = Where::current());
/// The running sum of `x` along `dim`, as `torch.cumsum`: element i is the sum of elements 0..i.
Tensor cumsum(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = std::nullopt,
              Where where = Where::current());

}  // namespace symtrace
