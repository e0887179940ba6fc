#pragma once
/// \file
/// `Dim` and `Shape`: tensor sizes whose dims may each be known or unknown. Concrete tensors
/// have fully known shapes; symbolic tensors may carry unknown dims (printed `?`), which meta
/// functions propagate. A symbolic tensor may even have an unknown rank (printed `[...]`): the
/// output of a module whose forward could not be traced, when nothing tells its shape.

#include "symtrace/core/detail/small_vector.hpp"
#include <fmt/core.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace symtrace {

/// One dimension of a shape: a known size (>= 0) or unknown. Any negative size is unknown.
class Dim {
 public:
  /// An unknown dim.
  constexpr Dim() noexcept = default;
  /// A known dim of `size` (a negative `size` gives an unknown dim).
  constexpr Dim(std::int64_t size) noexcept : size_(size < 0 ? -1 : size) {}  // NOLINT: implicit
  /// An unknown dim.
  [[nodiscard]] static constexpr Dim unknown() noexcept { return Dim(); }

  [[nodiscard]] constexpr bool is_known() const noexcept { return size_ >= 0; }
  /// The size if known, else nullopt.
  [[nodiscard]] constexpr std::optional<std::int64_t> maybe() const noexcept {
    return is_known() ? std::optional<std::int64_t>(size_) : std::nullopt;
  }
  /// The size, or -1 when unknown.
  [[nodiscard]] constexpr std::int64_t raw() const noexcept { return size_; }
  /// The size; throws InternalError when unknown (callers check `is_known()` first).
  [[nodiscard]] std::int64_t value() const;

  friend constexpr bool operator==(Dim, Dim) noexcept = default;

  /// Arithmetic on dims: the result is unknown when either operand is.
  friend constexpr Dim operator+(Dim a, Dim b) noexcept {
    return a.is_known() && b.is_known() ? Dim(a.size_ + b.size_) : Dim();
  }
  friend constexpr Dim operator*(Dim a, Dim b) noexcept {
    if ((a.is_known() && a.size_ == 0) || (b.is_known() && b.size_ == 0)) return Dim(0);
    return a.is_known() && b.is_known() ? Dim(a.size_ * b.size_) : Dim();
  }

 private:
  std::int64_t size_ = -1;
};

/// The sizes of a tensor, outermost first. Small shapes (rank <= 4) are stored inline.
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

/// "[2, ?, 4]"; "[...]" for an unknown rank.
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
