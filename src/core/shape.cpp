#include "symtrace/core/shape.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace symtrace {

namespace {
// An expression id in the raw value: raw = -2 - id.
constexpr std::int64_t encode(std::uint32_t id) noexcept { return -2 - static_cast<std::int64_t>(id); }
constexpr std::uint32_t decode(std::int64_t raw) noexcept { return static_cast<std::uint32_t>(-2 - raw); }
}  // namespace

Dim::Dim(SymExpr e) {
  if (const std::optional<std::int64_t> c = e.constant_value()) size_ = *c < 0 ? -1 : *c;
  else size_ = encode(e.id());
}

std::optional<SymExpr> Dim::expr() const {
  if (is_known()) return SymExpr(size_);
  if (is_symbolic()) return SymExpr(decode(size_), 0);
  return std::nullopt;
}

Dim Dim::combine(Dim a, Dim b, int op) {
  const std::optional<SymExpr> x = a.expr(), y = b.expr();
  if (!x || !y) return Dim();
  try {
    switch (op) {
      case 0: return Dim(*x + *y);
      case 1: return Dim(*x - *y);
      default: return Dim(*x * *y);
    }
  } catch (const std::invalid_argument&) {  // a coefficient beyond 64 bits
    return Dim();
  }
}

Dim floordiv(Dim a, std::int64_t k) {
  SYMTRACE_ASSERT(k > 0, "floordiv of a dim by a non-positive divisor");
  if (a.is_known()) return Dim(a.size_ / k);
  if (a.is_anonymous()) return Dim();
  return Dim(floordiv(*a.expr(), k));
}

std::int64_t Dim::value() const {
  SYMTRACE_ASSERT(is_known(), "value() of an unknown dim");
  return size_;
}

bool Shape::is_fully_known() const noexcept {
  return rank_known_ && std::all_of(dims_.begin(), dims_.end(), [](Dim d) { return d.is_known(); });
}

bool Shape::is_fully_described() const noexcept {
  return rank_known_ && std::none_of(dims_.begin(), dims_.end(), [](Dim d) { return d.is_anonymous(); });
}

Dim Shape::numel_dim() const {
  if (!rank_known_) return Dim();
  Dim n = 1;
  for (Dim d : dims_) n = n * d;
  return n;
}

std::optional<std::int64_t> Shape::numel() const noexcept {
  if (!rank_known_) return std::nullopt;
  for (Dim d : dims_) {
    if (d.is_known() && d.raw() == 0) return 0;
  }
  std::int64_t n = 1;
  for (Dim d : dims_) {
    if (!d.is_known() || __builtin_mul_overflow(n, d.raw(), &n)) return std::nullopt;
  }
  return n;
}

std::vector<std::int64_t> Shape::sizes() const {
  SYMTRACE_ASSERT(rank_known_, "sizes() of a shape of unknown rank");
  std::vector<std::int64_t> out;
  out.reserve(dims_.size());
  for (Dim d : dims_) out.push_back(d.value());
  return out;
}

std::string to_string(Dim dim) {
  if (dim.is_known()) return std::to_string(dim.raw());
  if (dim.is_anonymous()) return "?";
  return to_string(*dim.expr());
}

std::string to_string(const Shape& shape) {
  if (!shape.is_rank_known()) return "[...]";
  std::string out = "[";
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (i != 0) out += ", ";
    out += to_string(shape[i]);
  }
  out += ']';
  return out;
}

}  // namespace symtrace

auto fmt::formatter<symtrace::Dim>::format(symtrace::Dim dim, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(dim), ctx);
}

auto fmt::formatter<symtrace::Shape>::format(const symtrace::Shape& shape,
                                             format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(shape), ctx);
}
