#pragma once
/// \file
/// Creation ops that a trace records: `arange` whose bounds are sizes known only when run,
/// `empty`, and the `_like` / `new_` forms that take their dtype (and shape) from a tensor.
/// The eager factories of plain numbers (`zeros`, `arange(5)`, `tensor`) are in
/// core/factories.hpp; these go through the op registry, so a symbolic argument is recorded.
///
/// Schemas:
/// - `arange(Tensor|Scalar start, Tensor|Scalar end, Tensor|Scalar step=1, ScalarType? dtype=None)`:
///   start, start + step, ... up to but excluding end: ceil((end - start) / step) elements, as
///   PyTorch's rule (computed in int64 for an int64 result, else in double). The dtype is
///   int64 when start, end and step are all integers (or sizes), else float32. Each bound is a
///   number or a proxy SymInt (the schema says `Tensor|Scalar`, the type that admits proxies;
///   a tensor is refused). With a proxy bound the traced length is an unknown dim.
/// - `empty(int[] size, ScalarType? dtype=None)`: a tensor of `size` (float32 by default),
///   filled with zeros so that runs are deterministic.
/// - `zeros_like(Tensor self, ScalarType? dtype=None)`,
///   `full_like(Tensor self, Scalar fill_value, ScalarType? dtype=None)`: self's shape, in self's
///   dtype unless given (the value is converted: `full_like(int64 x, 2.7)` holds 2).
/// - `new_empty(Tensor self, int[] size, ScalarType? dtype=None)`: a zero-filled tensor of
///   `size` in self's dtype unless given.
///
/// Sizes may hold proxy SymInts (`empty({x.size(0), 4})`), which give unknown dims when traced.

#include "symtrace/core/scalar.hpp"
#include "symtrace/core/sym_int.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"

#include <concepts>
#include <cstdint>
#include <optional>
#include <source_location>

namespace symtrace {

using Where = std::source_location;

namespace detail {
/// The `arange` op on boxed bounds (numbers or proxy SymInts).
Tensor arange_op(Value start, Value end, Value step, std::optional<DType> dtype, Where where);
}  // namespace detail

/// A bound of `arange`: a number or a size.
template <class T>
concept ArangeBound = Arithmetic<T> || std::same_as<T, SymInt>;

/// `torch.arange(end)` where `end` is a size (`arange(x.size(1))`): traced with that size
/// unknown, it records an `arange` node of unknown length. (Plain numbers take the eager
/// `arange` of core/factories.hpp.)
template <std::same_as<SymInt> End>
[[nodiscard]] Tensor arange(const End& end, std::optional<DType> dtype = std::nullopt, Where where = Where::current()) {
  return detail::arange_op(Value(std::int64_t{0}), Value(end), Value(std::int64_t{1}), dtype, where);
}

/// `torch.arange(start, end, step)` where at least one bound is a size, e.g.
/// `arange(0.5, n, 0.5)` (float32) or `arange(0, n, 2)` (int64).
template <ArangeBound Start, ArangeBound End, ArangeBound Step = std::int64_t>
requires(std::same_as<Start, SymInt> || std::same_as<End, SymInt> || std::same_as<Step, SymInt>)
    [[nodiscard]] Tensor arange(const Start& start, const End& end, const Step& step = 1,
                                std::optional<DType> dtype = std::nullopt, Where where = Where::current()) {
  return detail::arange_op(Value(start), Value(end), Value(step), dtype, where);
}

/// A zero-filled tensor of `size` (float32 unless `dtype` is given).
[[nodiscard]] Tensor empty(const SymIntList& size, std::optional<DType> dtype = std::nullopt,
                           Where where = Where::current());
/// Zeros of `x`'s shape, in `x`'s dtype unless `dtype` is given.
[[nodiscard]] Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                                Where where = Where::current());
/// `value` (converted to the dtype) in `x`'s shape, in `x`'s dtype unless `dtype` is given.
[[nodiscard]] Tensor full_like(const Tensor& x, Scalar value, std::optional<DType> dtype = std::nullopt,
                               Where where = Where::current());
/// A zero-filled tensor of `size`, in `x`'s dtype unless `dtype` is given (`x.new_empty(size)`).
[[nodiscard]] Tensor new_empty(const Tensor& x, const SymIntList& size, std::optional<DType> dtype = std::nullopt,
                               Where where = Where::current());

}  // namespace symtrace
