#pragma once
/// \file
/// `SymExpr`: a size as an integer expression over named dims (`N`, `H//4`,
/// `(H - 1)//2 + 1`, `N*H*W`), the symbolic sizes of DESIGN.md's key decision 13, without
/// sympy. An expression is a sum of products of atoms with integer coefficients, plus a
/// constant; an atom is a named dim, a floor division by a positive constant, or a min or max
/// of two expressions. Expressions are kept in a canonical form and interned, so equal
/// expressions are the same handle and compare equal in O(1):
///
///     SymExpr h = SymExpr::symbol("H");
///     SymExpr out = floordiv(h + 2 * 3 - 7, 2) + 1;   // a convolution's output size
///     to_string(out);                                 // "(H + 1)//2": the constant folded in
///     out == floordiv(h - 1, 2) + 1;                  // true: the same handle
///     out.evaluate({{"H", 224}});                     // 112
///
/// Canonical rules: like terms combine and zero terms vanish; products distribute; a floor
/// division splits off what the divisor divides exactly (`(2*H + 3)//2` is `H + 1`), nests
/// (`(H//2)//2` is `H//4`) and folds constants; `x % k` is `x - k*(x//k)`; a min or max of
/// expressions whose difference is a constant is the smaller or larger one. The canonical form
/// is not a decision procedure: two expressions equal for every value may still differ (a min
/// against its expansion), which only costs a guard, never a wrong answer.
///
/// Handles are valid for the life of the process (the table only grows) and may be used from
/// any thread; building an expression takes one lock.

#include <fmt/core.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace {

/// The value of each named dim, for `SymExpr::evaluate`.
using SymBindings = std::vector<std::pair<std::string, std::int64_t>>;

/// A size as an expression over named dims; see the file comment.
class SymExpr {
 public:
  /// The constant 0.
  SymExpr() noexcept = default;
  /// The constant `value`.
  SymExpr(std::int64_t value);  // NOLINT: implicit, as an int in a size expression
  /// The named dim `name` (a non-empty identifier). Throws std::invalid_argument otherwise.
  [[nodiscard]] static SymExpr symbol(std::string_view name);

  /// Whether it is a constant, and which.
  [[nodiscard]] std::optional<std::int64_t> constant_value() const;
  [[nodiscard]] bool is_constant() const { return constant_value().has_value(); }
  /// The value for `bindings`; throws std::invalid_argument naming a dim it does not bind, or
  /// when the value overflows 64 bits.
  [[nodiscard]] std::int64_t evaluate(const SymBindings& bindings) const;
  /// The named dims it depends on, sorted.
  [[nodiscard]] std::vector<std::string> symbols() const;
  /// The interned id: equal expressions have equal ids (0 is the constant 0).
  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }
  /// The expression of an id another handle gave (`id()`); throws std::invalid_argument for an
  /// id no expression has.
  [[nodiscard]] static SymExpr from_id(std::uint32_t id);

  friend bool operator==(SymExpr, SymExpr) noexcept = default;

  // Arithmetic; each throws std::invalid_argument when a coefficient overflows 64 bits.
  friend SymExpr operator+(SymExpr a, SymExpr b);
  friend SymExpr operator-(SymExpr a, SymExpr b);
  friend SymExpr operator-(SymExpr a);
  friend SymExpr operator*(SymExpr a, SymExpr b);
  /// Floor division by a positive constant (Python's `//`); std::invalid_argument for k <= 0.
  friend SymExpr floordiv(SymExpr a, std::int64_t k);
  /// Python's `%` by a positive constant: `a - k*(a//k)`; std::invalid_argument for k <= 0.
  friend SymExpr mod(SymExpr a, std::int64_t k);
  friend SymExpr min(SymExpr a, SymExpr b);
  friend SymExpr max(SymExpr a, SymExpr b);

 private:
  explicit SymExpr(std::uint32_t id, int /*tag*/) noexcept : id_(id) {}
  friend struct SymExprAccess;
  std::uint32_t id_ = 0;
};

/// "(H - 1)//2 + 1", "N*H*W", "2*N", "min(N, 4)", "7".
[[nodiscard]] std::string to_string(SymExpr e);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::SymExpr> : fmt::formatter<std::string_view> {
  auto format(symtrace::SymExpr e, format_context& ctx) const -> format_context::iterator;
};
