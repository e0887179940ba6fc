#pragma once
/// \file
/// `SymFloat`: a float computed from sizes, known or a proxy, as `SymInt` is an int
/// (docs/design.md, decisions 2 and 13). Model code scales sizes by floats (`int(H * 0.5)`,
/// `math.floor(float(H) * scale)`); on a size unknown at trace time the product is a proxy
/// naming an `operator.mul` node, and turning it back into an int (`sym_int`, `sym_floor`,
/// `sym_ceil`) records that too, so the graph computes the size when it runs:
///
///     SymInt h = x.size(2);                 // %size = call_method[target=size](%x, 2): H
///     SymFloat half = h * 0.5;              // %mul = call_function[target=operator.mul](%size, 0.5)
///     SymInt out = sym_int(half);           // %sym_int = call_function[target=sym_int](%mul): H//2
///
/// What is known of a proxy's value is a fraction `numerator() / denominator()`: an
/// expression over named dims divided by a power of two (`H*0.5` is `H/2`, `H*0.75` is
/// `3*H/4`). Such a fraction is exactly the double the run computes (while its numerator stays
/// below 2^53), so `floor` of it is an exact size expression (`H//2`, `(3*H)//4`) and the
/// output shapes of a model that scales by 0.5 keep `H`. A float with no short binary fraction (0.3, 1/3) makes
/// the value anonymous: still a node the run computes, with the sizes it gives shown as `?`.
///
/// Turning a proxy into a C++ double (`value()`, `static_cast<double>`) throws TraceError, as
/// for SymInt.

#include "symtrace/core/sym_int.hpp"

#include <concepts>
#include <cstdint>
#include <optional>
#include <source_location>
#include <string>

namespace symtrace {

/// A float: a known double, or a proxy naming the node of the active trace that computes it.
class SymFloat {
 public:
  using Where = std::source_location;

  /// 0.0.
  constexpr SymFloat() noexcept = default;
  /// A known double.
  template <std::floating_point T>
  constexpr SymFloat(T value) noexcept : value_(static_cast<double>(value)) {}  // NOLINT: implicit

  /// A proxy float: `proxy` is a symbolic 0-dim tensor naming the node that computes it, made at
  /// `where`, whose value is `numerator / denominator` (a power of two), or anonymous when the
  /// numerator is. For tracers.
  [[nodiscard]] static SymFloat symbolic(Tensor proxy, Where where, Dim numerator = Dim(),
                                         std::int64_t denominator = 1) noexcept;

  /// True for a plain double, false for a proxy.
  [[nodiscard]] bool is_known() const noexcept { return !proxy_.defined(); }
  [[nodiscard]] bool is_symbolic() const noexcept { return proxy_.defined(); }
  /// The double when known, else nullopt.
  [[nodiscard]] std::optional<double> maybe() const noexcept {
    return is_known() ? std::optional<double>(value_) : std::nullopt;
  }
  /// The double; on a proxy, throws TraceError at `where` (C++ code on an unknown size).
  [[nodiscard]] double value(Where where = Where::current()) const;
  /// As `value()`, reporting the place the proxy was made.
  explicit operator double() const { return value(where_); }

  /// What is known of a proxy's value, as `numerator() / denominator()`: an expression over
  /// named dims, or anonymous. For a known double, anonymous (read `maybe()`).
  [[nodiscard]] Dim numerator() const noexcept { return numerator_; }
  /// A power of two, 1 for a known double.
  [[nodiscard]] std::int64_t denominator() const noexcept { return denominator_; }
  /// The symbolic tensor naming the proxy's node (undefined when known).
  [[nodiscard]] const Tensor& proxy() const noexcept { return proxy_; }
  /// Where a proxy was made.
  [[nodiscard]] Where where() const noexcept { return where_; }

 private:
  double value_ = 0.0;
  Tensor proxy_;
  Where where_{};
  Dim numerator_;
  std::int64_t denominator_ = 1;
};

/// An operand of a SymFloat operator: a number, a SymInt or a SymFloat, and the caller's source
/// location.
struct SymFloatOperand {
  template <class T>
  requires(std::integral<T> || std::floating_point<T>)
      SymFloatOperand(T v, std::source_location where = std::source_location::current())
  noexcept  // NOLINT
      : where(where) {
    if constexpr (std::floating_point<T>) real = static_cast<double>(v);
    else integer = SymInt(static_cast<std::int64_t>(v));
  }
  SymFloatOperand(const SymInt& v, std::source_location where = std::source_location::current()) noexcept  // NOLINT
      : integer(v), where(where) {}
  SymFloatOperand(const SymFloat& v, std::source_location where = std::source_location::current()) noexcept  // NOLINT
      : real(v), where(where) {}
  /// The operand, when it is a float.
  std::optional<SymFloat> real;
  /// The operand, when it is an int (or a bool).
  SymInt integer;
  std::source_location where;
};

namespace detail {
enum class SymFloatOp : std::uint8_t {
  add,
  sub,
  mul,
  truediv,
  eq,
  ne,
  lt,
  le,
  gt,
  ge
};
[[nodiscard]] SymFloat sym_float_arithmetic(SymFloatOp op, const SymFloatOperand& a, const SymFloatOperand& b);
[[nodiscard]] SymBool sym_float_comparison(SymFloatOp op, const SymFloatOperand& a, const SymFloatOperand& b);
}  // namespace detail

// ---- Operators. Each is a template only so that, where an operand is a SymInt and the other
// an int or a SymInt, overload resolution prefers SymInt's operator (an int result); with a
// float or a SymFloat operand only these apply. Known operands compute at once.
template <class = void>
SymFloat operator+(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_arithmetic(detail::SymFloatOp::add, a, b);
}
template <class = void>
SymFloat operator-(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_arithmetic(detail::SymFloatOp::sub, a, b);
}
template <class = void>
SymFloat operator*(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_arithmetic(detail::SymFloatOp::mul, a, b);
}
/// True division (Python's `/`); std::invalid_argument when `b` is a known 0.
template <class = void>
SymFloat operator/(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_arithmetic(detail::SymFloatOp::truediv, a, b);
}
template <class = void>
SymBool operator==(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_comparison(detail::SymFloatOp::eq, a, b);
}
template <class = void>
SymBool operator!=(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_comparison(detail::SymFloatOp::ne, a, b);
}
template <class = void>
SymBool operator<(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_comparison(detail::SymFloatOp::lt, a, b);
}
template <class = void>
SymBool operator<=(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_comparison(detail::SymFloatOp::le, a, b);
}
template <class = void>
SymBool operator>(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_comparison(detail::SymFloatOp::gt, a, b);
}
template <class = void>
SymBool operator>=(const SymFloatOperand& a, const SymFloatOperand& b) {
  return detail::sym_float_comparison(detail::SymFloatOp::ge, a, b);
}

/// `float(n)` (torch.sym_float): the size as a float; a proxy records `sym_float`.
[[nodiscard]] SymFloat sym_float(const SymIntOperand& n);
/// `int(f)` (torch.sym_int): rounded toward zero, as Python's `int()`; a proxy records `sym_int`.
[[nodiscard]] SymInt sym_int(const SymFloatOperand& f);
/// `math.floor(f)`: a proxy records `math.floor`.
[[nodiscard]] SymInt sym_floor(const SymFloatOperand& f);
/// `math.ceil(f)`: a proxy records `math.ceil`.
[[nodiscard]] SymInt sym_ceil(const SymFloatOperand& f);

/// "0.5", or "SymFloat(%7)" for a proxy naming node 7.
[[nodiscard]] std::string to_string(const SymFloat& f);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::SymFloat> : fmt::formatter<std::string_view> {
  auto format(const symtrace::SymFloat& f, format_context& ctx) const -> format_context::iterator;
};
