#pragma once
/// \file
/// Making concrete tensors: constants (`zeros`, `ones`, `full`, `arange`), tensors from C++
/// data (`tensor`), and deterministic random tensors (`randn`, `rand`) from a `Generator`.
/// Every function takes the caller's source location for its error messages.

#include "symtrace/core/random.hpp"
#include "symtrace/core/tensor.hpp"

#include <initializer_list>
#include <optional>
#include <source_location>
#include <span>
#include <string_view>
#include <vector>

namespace symtrace {

using Where = std::source_location;

/// A tensor of `shape` filled with 0. A shape holding a proxy SymInt (`zeros({x.size(0), 16})`
/// traced with an unknown batch) gives a symbolic tensor: the trace records a `zeros` node.
[[nodiscard]] Tensor zeros(const SymIntList& shape, DType dtype = DType::float32, Where where = Where::current());
/// A tensor of `shape` filled with 1 (symbolic as `zeros` is).
[[nodiscard]] Tensor ones(const SymIntList& shape, DType dtype = DType::float32, Where where = Where::current());
/// A tensor of `shape` filled with `value` (dtype defaults to the value's: bool, int64, float32;
/// symbolic as `zeros` is).
[[nodiscard]] Tensor full(const SymIntList& shape, Scalar value, std::optional<DType> dtype = std::nullopt,
                          Where where = Where::current());
/// 0, 1, ..., end-1 (int64 for integer bounds, float32 otherwise).
[[nodiscard]] Tensor arange(Scalar end, std::optional<DType> dtype = std::nullopt, Where where = Where::current());
/// start, start+step, ... up to but excluding end; step must not be 0.
[[nodiscard]] Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype = std::nullopt,
                            Where where = Where::current());
/// Standard-normal samples from `gen` (this thread's default generator when omitted).
[[nodiscard]] Tensor randn(const IntList& shape, Where where = Where::current());
[[nodiscard]] Tensor randn(const IntList& shape, Generator& gen, Where where = Where::current());
/// Uniform samples in [0, 1).
[[nodiscard]] Tensor rand(const IntList& shape, Where where = Where::current());
[[nodiscard]] Tensor rand(const IntList& shape, Generator& gen, Where where = Where::current());

namespace detail {
/// The `zeros`/`ones`/`full` op `name` called with a shape holding proxy SymInts: the active
/// trace records it (defined by the ops layer).
Tensor symbolic_full(std::string_view name, const SymIntList& shape, Scalar value, DType dtype, Where where);
Tensor from_floats(std::span<const float> data, const IntList& shape, Where where);
Tensor from_ints(std::span<const std::int64_t> data, const IntList& shape, Where where);
Tensor from_bools(std::span<const bool> data, const IntList& shape, Where where);
template <class T>
Tensor from_values(std::span<const T> values, const IntList& shape, Where where) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<char> tmp(values.begin(), values.end());
    return from_bools(std::span<const bool>(reinterpret_cast<const bool*>(tmp.data()), tmp.size()), shape, where);
  } else if constexpr (std::is_integral_v<T>) {
    std::vector<std::int64_t> tmp(values.begin(), values.end());
    return from_ints(tmp, shape, where);
  } else {
    std::vector<float> tmp(values.begin(), values.end());
    return from_floats(tmp, shape, where);
  }
}
}  // namespace detail

/// A tensor holding `values` in row-major order, of `shape` (1-D when `shape` is empty, as
/// `torch.tensor([...])`; use `scalar_tensor` for a 0-dim tensor).
/// The dtype follows T: floating -> float32, integral -> int64, bool -> bool.
/// Example: `tensor({1.f, 2.f, 3.f, 4.f}, {2, 2})`.
template <Arithmetic T>
[[nodiscard]] Tensor tensor(std::initializer_list<T> values, const IntList& shape = {},
                            Where where = Where::current()) {
  return detail::from_values<T>(std::span<const T>(values.begin(), values.size()), shape, where);
}
template <Arithmetic T>
[[nodiscard]] Tensor tensor(const std::vector<T>& values, const IntList& shape = {},
                            Where where = Where::current()) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<char> tmp(values.begin(), values.end());
    return detail::from_bools(std::span<const bool>(reinterpret_cast<const bool*>(tmp.data()), tmp.size()),
                              shape, where);
  } else {
    return detail::from_values<T>(std::span<const T>(values), shape, where);
  }
}

/// A 0-dim tensor holding `value`.
[[nodiscard]] Tensor scalar_tensor(Scalar value, std::optional<DType> dtype = std::nullopt,
                                   Where where = Where::current());

}  // namespace symtrace
