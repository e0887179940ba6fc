#pragma once
/// \file
/// `SymInt`, `SymBool` and `SymIntList`: sizes that are plain numbers when known and proxies
/// when not (docs/design.md, decision 2). `x.size(0)` of a tensor whose dim 0 is known gives a plain
/// number and records nothing; of a symbolic tensor whose dim 0 is unknown it gives a proxy
/// naming a `size` node of the trace. Arithmetic on proxies is recorded (fx's
/// `operator.mul`, ...), and proxies can size new tensors: `x.reshape({B, N, 3, h, d})`,
/// `zeros({x.size(0), hidden})`.
///
///     SymInt b = x.size(0);            // known: 8; unknown: %size = call_method[target=size](%x, 0)
///     Tensor y = x.reshape({b, -1});   // the proxy becomes an argument of the reshape node
///     if (x.size(1) > 3) ...           // known: a plain branch; unknown: TraceError at this line
///
/// A proxy also carries what is known of its value (`dim()`): an expression over the named dims
/// of the trace's inputs (`x.size(0)` of a `float32[N, 12]` is `N`, and `* 2` makes it `2*N`).
/// Meta functions read it, so `x.reshape({x.size(0), -1})` has the shape `[N, 12]`, and a
/// comparison that the dims' ranges decide (`x.size(0) > 0` with `N >= 1`) is a plain bool.
///
/// Turning an unknown SymInt into a C++ integer (`value()`, `static_cast<std::int64_t>`) or an
/// unknown SymBool into a C++ bool (`if (...)`) throws TraceError: control flow that depends on a
/// size unknown at trace time cannot be captured. Give the trace example shapes instead.
///
/// Division and remainder follow Python's `//` and `%` (floor division, the remainder has the
/// divisor's sign), as the recorded `operator.floordiv` and `operator.mod` do; for sizes, which
/// are non-negative, that is C++'s `/` and `%`.

#include "symtrace/core/tensor.hpp"

#include <fmt/core.h>

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace symtrace {

/// A size: a known integer, or a proxy naming the node of the active trace that computes it.
class SymInt {
 public:
  using Where = std::source_location;

  /// 0.
  constexpr SymInt() noexcept = default;
  /// A known integer.
  template <std::integral T>
  requires(!std::same_as<T, bool>) constexpr SymInt(T value) noexcept : value_(static_cast<std::int64_t>(value)) {}  // NOLINT: implicit

  /// A proxy integer: `proxy` is a symbolic 0-dim tensor naming the node that computes it,
  /// made at `where`, whose value is `dim` (an expression over named dims, or anonymous when
  /// nothing is known of it). For tracers.
  [[nodiscard]] static SymInt symbolic(Tensor proxy, Where where, Dim dim = Dim()) noexcept;

  /// True for a plain integer, false for a proxy.
  [[nodiscard]] bool is_known() const noexcept { return !proxy_.defined(); }
  [[nodiscard]] bool is_symbolic() const noexcept { return proxy_.defined(); }
  /// The integer when known, else nullopt.
  [[nodiscard]] std::optional<std::int64_t> maybe() const noexcept {
    return is_known() ? std::optional<std::int64_t>(value_) : std::nullopt;
  }
  /// The integer; on a proxy, throws TraceError at `where` (control flow on an unknown size).
  [[nodiscard]] std::int64_t value(Where where = Where::current()) const;
  /// As `value()`, reporting the place the proxy was made.
  explicit operator std::int64_t() const { return value(where_); }

  /// What is known of the value: the integer, an expression over named dims (`N*2` for
  /// `x.size(0) * 2`), or anonymous.
  [[nodiscard]] Dim dim() const noexcept { return is_known() ? Dim(value_) : dim_; }
  /// The symbolic tensor naming the proxy's node (undefined when known).
  [[nodiscard]] const Tensor& proxy() const noexcept { return proxy_; }
  /// Where a proxy was made (the `size()` call or the arithmetic).
  [[nodiscard]] Where where() const noexcept { return where_; }

 private:
  std::int64_t value_ = 0;
  Tensor proxy_;
  Where where_{};
  Dim dim_;
};

/// The result of comparing SymInts: a known bool, or a proxy naming the comparison's node.
class SymBool {
 public:
  using Where = std::source_location;
  constexpr SymBool(bool value) noexcept : value_(value) {}  // NOLINT: implicit
  /// A proxy bool naming the node `proxy` names, made at `where`. For tracers.
  [[nodiscard]] static SymBool symbolic(Tensor proxy, Where where) noexcept;

  [[nodiscard]] bool is_known() const noexcept { return !proxy_.defined(); }
  [[nodiscard]] std::optional<bool> maybe() const noexcept {
    return is_known() ? std::optional<bool>(value_) : std::nullopt;
  }
  /// The bool; on a proxy, throws TraceError at `where`.
  [[nodiscard]] bool value(Where where = Where::current()) const;
  /// `if (a < b)`: the bool; on a proxy, TraceError naming the comparison's file:line.
  explicit operator bool() const { return value(where_); }
  [[nodiscard]] const Tensor& proxy() const noexcept { return proxy_; }
  [[nodiscard]] Where where() const noexcept { return where_; }

 private:
  bool value_ = false;
  Tensor proxy_;
  Where where_{};
};

/// An operand of a SymInt operator: the number and the caller's source location, captured
/// when the operand is converted at the call site (so recorded nodes name the user's line).
struct SymIntOperand {
  template <std::integral T>
  requires(!std::same_as<T, bool>)
      SymIntOperand(T v, std::source_location where = std::source_location::current())
  noexcept  // NOLINT
      : value(v), where(where) {}
  SymIntOperand(const SymInt& v, std::source_location where = std::source_location::current()) noexcept  // NOLINT
      : value(v), where(where) {}
  SymInt value;
  std::source_location where;
};

// ---- Operators: known operands compute at once; a proxy operand records a node.
// Both sides are SymIntOperand so `n * 2`, `2 * n` and `n * m` resolve alike.
SymInt operator+(const SymIntOperand& a, const SymIntOperand& b);
SymInt operator-(const SymIntOperand& a, const SymIntOperand& b);
SymInt operator*(const SymIntOperand& a, const SymIntOperand& b);
/// Floor division (Python's `//`); throws std::invalid_argument when `b` is a known 0.
SymInt operator/(const SymIntOperand& a, const SymIntOperand& b);
/// Python's `%` (the result has `b`'s sign); throws std::invalid_argument when `b` is a known 0.
SymInt operator%(const SymIntOperand& a, const SymIntOperand& b);
/// min(a, b) and max(a, b) (torch.sym_min / sym_max): `topk(x, sym_min(k, n))` with a count
/// `n` known only when run.
SymInt sym_min(const SymIntOperand& a, const SymIntOperand& b);
SymInt sym_max(const SymIntOperand& a, const SymIntOperand& b);
SymBool operator==(const SymIntOperand& a, const SymIntOperand& b);
SymBool operator!=(const SymIntOperand& a, const SymIntOperand& b);
SymBool operator<(const SymIntOperand& a, const SymIntOperand& b);
SymBool operator<=(const SymIntOperand& a, const SymIntOperand& b);
SymBool operator>(const SymIntOperand& a, const SymIntOperand& b);
SymBool operator>=(const SymIntOperand& a, const SymIntOperand& b);

/// A list of sizes, some of which may be proxies: what `x.sizes()` returns and what shape
/// arguments (`reshape`, `view`, `expand`, `zeros`, ...) take. Converts from a braced list
/// of ints and SymInts and from an IntList.
class SymIntList {
 public:
  using const_iterator = std::vector<SymInt>::const_iterator;
  SymIntList() = default;
  SymIntList(std::initializer_list<SymInt> sizes) : sizes_(sizes) {}            // NOLINT: implicit
  SymIntList(const IntList& sizes) : sizes_(sizes.begin(), sizes.end()) {}      // NOLINT: implicit
  SymIntList(std::vector<SymInt> sizes) noexcept : sizes_(std::move(sizes)) {}  // NOLINT: implicit

  [[nodiscard]] std::size_t size() const noexcept { return sizes_.size(); }
  [[nodiscard]] bool empty() const noexcept { return sizes_.empty(); }
  [[nodiscard]] const SymInt& operator[](std::size_t i) const noexcept { return sizes_[i]; }
  [[nodiscard]] const_iterator begin() const noexcept { return sizes_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return sizes_.end(); }
  void push_back(SymInt s) { sizes_.push_back(std::move(s)); }

  /// True when every size is a plain integer.
  [[nodiscard]] bool is_known() const noexcept;
  /// The integers; throws TraceError at the first proxy's location when one is unknown.
  [[nodiscard]] IntList to_int_list() const;

 private:
  std::vector<SymInt> sizes_;
};

/// "8", or "SymInt(%7)" for a proxy naming node 7.
[[nodiscard]] std::string to_string(const SymInt& s);
/// "True"/"False", or "SymBool(%7)".
[[nodiscard]] std::string to_string(const SymBool& s);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::SymInt> : fmt::formatter<std::string_view> {
  auto format(const symtrace::SymInt& s, format_context& ctx) const -> format_context::iterator;
};
