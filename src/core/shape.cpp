#include "symtrace/core/shape.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace symtrace {

std::int64_t Dim::value() const {
  SYMTRACE_ASSERT(is_known(), "value() of an unknown dim");
  return size_;
}

bool Shape::is_fully_known() const noexcept {
  return rank_known_ && std::all_of(dims_.begin(), dims_.end(), [](Dim d) { return d.is_known(); });
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

std::string to_string(Dim dim) { return dim.is_known() ? std::to_string(dim.raw()) : "?"; }

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
