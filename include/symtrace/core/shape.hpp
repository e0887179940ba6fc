#pragma once
/// \file
/// `Dim` and `Shape`: tensor sizes whose dims may each be known or unknown. Concrete tensors
/// have fully known shapes; symbolic tensors may carry unknown dims (printed `?`), which meta
/// functions propagate. A symbolic tensor may even have an unknown rank (printed `[...]`): the
/// output of a module whose forward could not be traced, when nothing tells its shape.

#include "symtrace/core/detail/small_vector.hpp"
#include "symtrace/core/sym_expr.hpp"
#include <fmt/core.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

/// One dimension of a shape: a known size (>= 0), a size expression over named dims (`N`,
/// `H//4`: docs/design.md, decision 13), or anonymous (`?`, unknown and unnamed). A Dim is 8 bytes:
/// an expression is stored as its interned id.
///
///     Dim n("N");                 // a named dim, N >= 1
///     Dim h("H", 32, 1024);       // a named dim with a range
///     Dim out = floordiv(h - 1, 2) + 1;   // "(H + 1)//2"
class Dim {
 public:
  /// An anonymous dim.
  constexpr Dim() noexcept = default;
  /// A known dim of `size` (a negative `size` gives an anonymous dim).
  constexpr Dim(std::int64_t size) noexcept : size_(size < 0 ? -1 : size) {}  // NOLINT: implicit
  /// The dim of a size expression: known when `e` is a constant (anonymous for a negative
  /// constant), else symbolic.
  Dim(SymExpr e);  // NOLINT: implicit
  /// The named dim `name` with values in lo..hi (`SymExpr::symbol`).
  explicit Dim(std::string_view name, std::int64_t lo = 1, std::int64_t hi = SymRange::unbounded)
      : Dim(SymExpr::symbol(name, SymRange{lo, hi})) {}
  /// An anonymous dim.
  [[nodiscard]] static constexpr Dim unknown() noexcept { return Dim(); }

  /// A known size.
  [[nodiscard]] constexpr bool is_known() const noexcept { return size_ >= 0; }
  /// A size expression over named dims.
  [[nodiscard]] constexpr bool is_symbolic() const noexcept { return size_ <= -2; }
  /// Neither known nor named (`?`).
  [[nodiscard]] constexpr bool is_anonymous() const noexcept { return size_ == -1; }
  /// The size if known, else nullopt.
  [[nodiscard]] constexpr std::optional<std::int64_t> maybe() const noexcept {
    return is_known() ? std::optional<std::int64_t>(size_) : std::nullopt;
  }
  /// The expression: a constant when known, the expression when symbolic, nullopt when
  /// anonymous.
  [[nodiscard]] std::optional<SymExpr> expr() const;
  /// The size if known, -1 when anonymous, a value <= -2 encoding the expression otherwise.
  [[nodiscard]] constexpr std::int64_t raw() const noexcept { return size_; }
  /// The size; throws InternalError when not known (callers check `is_known()` first).
  [[nodiscard]] std::int64_t value() const;

  /// Equal sizes or equal expressions (anonymous dims are equal to each other).
  friend constexpr bool operator==(Dim, Dim) noexcept = default;

  /// Arithmetic on dims: known sizes compute, expressions combine, and the result is anonymous
  /// when either operand is (a product with a known 0 is 0), or when a size overflows 64 bits.
  /// A size beyond 64 bits is anonymous.
  friend Dim operator+(Dim a, Dim b) {
    std::int64_t r = 0;
    if (a.is_known() && b.is_known()) return __builtin_add_overflow(a.size_, b.size_, &r) ? Dim() : Dim(r);
    return combine(a, b, 0);
  }
  friend Dim operator-(Dim a, Dim b) {
    if (a.is_known() && b.is_known()) return Dim(a.size_ - b.size_);
    return combine(a, b, 1);
  }
  friend Dim operator*(Dim a, Dim b) {
    if ((a.is_known() && a.size_ == 0) || (b.is_known() && b.size_ == 0)) return Dim(0);
    std::int64_t r = 0;
    if (a.is_known() && b.is_known()) return __builtin_mul_overflow(a.size_, b.size_, &r) ? Dim() : Dim(r);
    return combine(a, b, 2);
  }
  /// Floor division by a positive constant `k`.
  friend Dim floordiv(Dim a, std::int64_t k);

 private:
  static Dim combine(Dim a, Dim b, int op);
  std::int64_t size_ = -1;
};

/// The sizes of a tensor, outermost first. Small shapes (rank <= 4) are stored inline.
/// Each dim is known, an expression or anonymous (see Dim).
class Shape {
 public:
  using Storage = boost::container::small_vector<Dim, 4>;
  using const_iterator = Storage::const_iterator;

  Shape() = default;
  Shape(std::initializer_list<Dim> dims) : dims_(dims) {}
  /// A fully known shape from sizes (negative sizes become unknown dims).
  explicit Shape(std::span<const std::int64_t> sizes) : dims_(sizes.begin(), sizes.end()) {}
  explicit Shape(const std::vector<std::int64_t>& sizes)
      : Shape(std::span<const std::int64_t>(sizes)) {}
  /// A shape of `rank` unknown dims.
  [[nodiscard]] static Shape unknown(std::size_t rank) {
    Shape s;
    s.dims_.resize(rank);
    return s;
  }
  /// A shape of unknown rank (nothing is known of it).
  [[nodiscard]] static Shape unknown_rank() {
    Shape s;
    s.rank_known_ = false;
    return s;
  }

  /// False for a shape of unknown rank, whose rank() is 0 and has no dims: check this first
  /// where it matters.
  [[nodiscard]] bool is_rank_known() const noexcept { return rank_known_; }
  [[nodiscard]] std::size_t rank() const noexcept { return dims_.size(); }
  [[nodiscard]] std::int64_t ndim() const noexcept { return static_cast<std::int64_t>(dims_.size()); }
  [[nodiscard]] Dim operator[](std::size_t i) const noexcept { return dims_[i]; }
  [[nodiscard]] Dim& operator[](std::size_t i) noexcept { return dims_[i]; }
  [[nodiscard]] const_iterator begin() const noexcept { return dims_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return dims_.end(); }
  [[nodiscard]] bool empty() const noexcept { return dims_.empty(); }

  /// True when every dim is known.
  [[nodiscard]] bool is_fully_known() const noexcept;
  /// True when no dim is anonymous and the rank is known (each dim a size or an expression).
  [[nodiscard]] bool is_fully_described() const noexcept;
  /// The number of elements as a dim: a product of sizes and expressions, anonymous when a dim
  /// or the rank is (a known 0 still gives 0).
  [[nodiscard]] Dim numel_dim() const;
  /// Number of elements, when it can be known (all dims known, or some dim known to be 0) and
  /// fits in 64 bits.
  [[nodiscard]] std::optional<std::int64_t> numel() const noexcept;
  /// The sizes; throws InternalError if a dim is unknown.
  [[nodiscard]] std::vector<std::int64_t> sizes() const;

  void push_back(Dim d) { dims_.push_back(d); }
  void insert(std::size_t pos, Dim d) { dims_.insert(dims_.begin() + static_cast<std::ptrdiff_t>(pos), d); }
  void erase(std::size_t pos) { dims_.erase(dims_.begin() + static_cast<std::ptrdiff_t>(pos)); }
  void resize(std::size_t rank) { dims_.resize(rank); }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return a.rank_known_ == b.rank_known_ && a.dims_ == b.dims_;
  }

 private:
  Storage dims_;
  bool rank_known_ = true;
};

/// "[2, ?, 4]", "[N, 64, H//4, W//4]"; "[...]" for an unknown rank.
[[nodiscard]] std::string to_string(const Shape& shape);
[[nodiscard]] std::string to_string(Dim dim);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::Dim> : fmt::formatter<std::string_view> {
  auto format(symtrace::Dim dim, format_context& ctx) const -> format_context::iterator;
};
template <>
struct fmt::formatter<symtrace::Shape> : fmt::formatter<std::string_view> {
  auto format(const symtrace::Shape& shape, format_context& ctx) const -> format_context::iterator;
};
