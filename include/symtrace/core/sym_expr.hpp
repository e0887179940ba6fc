#pragma once
/// \file
/// `SymExpr`: a size as an integer expression over named dims (`N`, `H//4`,
/// `(H + 1)//2`, `N*H*W`), the symbolic sizes of docs/design.md's decision 13, without
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
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace {

/// The value of each named dim, for `SymExpr::evaluate`.
using SymBindings = std::vector<std::pair<std::string, std::int64_t>>;

/// The values a size may take: `lo <= value <= hi`. `unbounded` as `hi` (or its negation as
/// `lo`) is no bound. A named dim is at least 1 unless its range says otherwise.
struct SymRange {
  static constexpr std::int64_t unbounded = std::numeric_limits<std::int64_t>::max();
  std::int64_t lo = 1;
  std::int64_t hi = unbounded;
  [[nodiscard]] bool contains(std::int64_t v) const noexcept { return lo <= v && v <= hi; }
  friend bool operator==(const SymRange&, const SymRange&) = default;
};
/// "1..", "32..1024", "..7".
[[nodiscard]] std::string to_string(const SymRange& r);

/// A size as an expression over named dims; see the file comment.
class SymExpr {
 public:
  /// The constant 0.
  SymExpr() noexcept = default;
  /// The constant `value`.
  SymExpr(std::int64_t value);  // NOLINT: implicit, as an int in a size expression
  /// The named dim `name` (an identifier other than `min` and `max`) whose values lie in
  /// `range`. Throws std::invalid_argument for a bad name or an empty range. The range is part
  /// of the dim: `N` in 1..8 and `N` in 1.. are two dims that print alike, which a trace refuses
  /// to mix.
  [[nodiscard]] static SymExpr symbol(std::string_view name, SymRange range = {});
  /// Reads the text `to_string` writes (Python's syntax: `+ - * // %`, `min(a, b)`,
  /// `max(a, b)`, parentheses, non-negative integers, names); `range_of` gives each name's range.
  /// Throws std::invalid_argument naming the position of what is wrong.
  [[nodiscard]] static SymExpr parse(std::string_view text,
                                     const std::function<SymRange(std::string_view)>& range_of);

  /// Whether it is a constant, and which.
  [[nodiscard]] std::optional<std::int64_t> constant_value() const;
  [[nodiscard]] bool is_constant() const { return constant_value().has_value(); }
  /// The value for `bindings`; throws std::invalid_argument naming a dim it does not bind, or
  /// when the value overflows 64 bits.
  [[nodiscard]] std::int64_t evaluate(const SymBindings& bindings) const;
  /// The named dims it depends on, sorted.
  [[nodiscard]] std::vector<std::string> symbols() const;
  /// The named dims it depends on with their ranges, sorted by name.
  [[nodiscard]] std::vector<std::pair<std::string, SymRange>> symbol_ranges() const;
  /// When it is a bare named dim: its name and range.
  [[nodiscard]] std::optional<std::pair<std::string, SymRange>> as_symbol() const;
  /// Bounds of its values over the ranges of its dims (interval arithmetic: sound, not always
  /// tight; `unbounded` where no bound follows).
  [[nodiscard]] SymRange bounds() const;
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
  /// `a / b` when `b` divides `a` as polynomials (`(2*N*H*W) / (N*W)` is `2*H`): `b` a
  /// nonzero constant dividing every coefficient of `a`, or one term whose factors each term
  /// of `a` holds. Otherwise nullopt (the quotient may still exist for some values).
  friend std::optional<SymExpr> divide_exactly(SymExpr a, SymExpr b);

 private:
  explicit SymExpr(std::uint32_t id, int /*tag*/) noexcept : id_(id) {}
  friend struct SymExprAccess;
  friend class Dim;  // holds an id it took from a SymExpr: no check (and no lock) to read it back
  std::uint32_t id_ = 0;
};

/// "(H + 1)//2", "N*H*W", "2*N", "min(N, 4)", "H % 32", "7".
[[nodiscard]] std::string to_string(SymExpr e);

/// A relation between two sizes.
enum class SymRel : std::uint8_t {
  eq,
  ne,
  lt,
  le,
  gt,
  ge
};

/// A fact about sizes, `lhs rel rhs` (`N == M`, `H % 32 == 0`, `N >= 1`): what an op assumes
/// and the guards of a graph record.
struct SymFact {
  SymExpr lhs;
  SymRel rel = SymRel::eq;
  SymExpr rhs;
  /// True or false when the dims' ranges decide it, nullopt when they do not.
  [[nodiscard]] std::optional<bool> decide() const;
  /// Whether it holds for `bindings` (std::invalid_argument for a dim they do not bind).
  [[nodiscard]] bool holds(const SymBindings& bindings) const;
  /// The same fact, with an (in)equality whose difference is a remainder alone written as that
  /// remainder against 0: `H == 2*(H//2)` is `H % 2 == 0`, as it would be written.
  [[nodiscard]] SymFact normalized() const;
  /// Reads what `to_string` writes (`N == M`, `H % 32 == 0`); std::invalid_argument otherwise.
  [[nodiscard]] static SymFact parse(std::string_view text,
                                     const std::function<SymRange(std::string_view)>& range_of);
  friend bool operator==(const SymFact&, const SymFact&) = default;
};
/// "N == M", "H % 32 == 0".
[[nodiscard]] std::string to_string(const SymFact& f);
/// "==", "!=", "<", "<=", ">", ">=".
[[nodiscard]] std::string_view to_string(SymRel r) noexcept;

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::SymFact> : fmt::formatter<std::string_view> {
  auto format(const symtrace::SymFact& f, format_context& ctx) const -> format_context::iterator;
};
template <>
struct fmt::formatter<symtrace::SymExpr> : fmt::formatter<std::string_view> {
  auto format(symtrace::SymExpr e, format_context& ctx) const -> format_context::iterator;
};
