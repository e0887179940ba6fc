#pragma once
/// \file
/// `OpSchema`: an op's signature, written in PyTorch's schema language and parsed once at
/// registration: `add(Tensor self, Tensor|Scalar other) -> Tensor`,
/// `sum(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor`. Types: Tensor, int, float,
/// bool, Scalar, str, ScalarType, the union `Tensor|Scalar`, `Any` (any value), `number` (size
/// arithmetic's operands, proxies included); a `[]` suffix makes a list and `?`
/// makes it optional (None allowed); `?` before the `[]` makes the list's items optional
/// (`Tensor?[] indices`: advanced indexing's list, None for a whole dim). Arguments after a
/// lone `*` are keyword-only. Ops return `Tensor`, `Tensor[]`, or a number (`int`, `bool`, `float`,
/// or `number`, an int or a float as the operands decide: size arithmetic such as
/// `size(Tensor self, int dim) -> int` and `operator.lt(number a, number b) -> bool`). An `int` argument also takes a proxy SymInt.

#include "symtrace/core/value.hpp"

#include <fmt/core.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

/// The base type of one argument.
enum class ArgType : std::uint8_t {
  Tensor,
  int_,
  float_,
  bool_,
  Scalar,
  str,
  ScalarType,
  TensorOrScalar,
  /// Any value: an argument of a type symtrace does not model (a device, a layout, a memory
  /// format), passed through to an op that does (the LibTorch ops of decision 14).
  Any,
  /// A number of size arithmetic: a bool, int or float, or a proxy SymInt or SymFloat.
  number
};

/// One argument of a schema.
struct ArgSpec {
  std::string name;
  ArgType type = ArgType::Tensor;
  bool is_list = false;
  bool is_optional = false;
  bool items_optional = false;  ///< a list whose items may be None (`Tensor?[]`)
  bool kwarg_only = false;
  std::optional<Value> default_value;  ///< set when the argument may be omitted
};

/// What an op returns.
enum class ReturnType : std::uint8_t {
  Tensor,
  TensorList,
  int_,
  bool_,
  float_,
  /// An int or a float, as the operands decide (Python's `a * b`).
  number
};

/// A parsed op signature.
struct OpSchema {
  std::string name;
  std::vector<ArgSpec> args;
  ReturnType returns = ReturnType::Tensor;
  [[nodiscard]] bool returns_list() const noexcept { return returns == ReturnType::TensorList; }
  /// True for `-> int`, `-> bool`, `-> float` and `-> number`.
  [[nodiscard]] bool returns_number() const noexcept {
    return returns == ReturnType::int_ || returns == ReturnType::bool_ || returns == ReturnType::float_ ||
           returns == ReturnType::number;
  }

  /// Index of the argument called `arg`, or nullopt.
  [[nodiscard]] std::optional<std::size_t> find_arg(std::string_view arg) const noexcept;
  /// True when `value` is acceptable for argument `spec` (before defaults are applied).
  [[nodiscard]] static bool accepts(const ArgSpec& spec, const Value& value) noexcept;
};

/// Parses schema text; throws std::invalid_argument naming the column of a syntax error.
[[nodiscard]] OpSchema parse_schema(std::string_view text);

/// The schema in its source form (round-trips through `parse_schema`).
[[nodiscard]] std::string to_string(const OpSchema& schema);
/// "Tensor", "int[]", "Scalar?", ...
[[nodiscard]] std::string type_string(const ArgSpec& spec);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::OpSchema> : fmt::formatter<std::string_view> {
  auto format(const symtrace::OpSchema& s, format_context& ctx) const -> format_context::iterator;
};
