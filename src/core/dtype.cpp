#include "symtrace/core/dtype.hpp"

#include <fmt/format.h>

namespace symtrace {

std::string_view name(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::int64: return "int64";
    case DType::bool_: return "bool";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view text) noexcept {
  if (text == "float32" || text == "float") return DType::float32;
  if (text == "int64" || text == "long") return DType::int64;
  if (text == "bool") return DType::bool_;
  return std::nullopt;
}

std::string to_string(DType dtype) { return std::string(name(dtype)); }

}  // namespace symtrace

auto fmt::formatter<symtrace::DType>::format(symtrace::DType dtype, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::name(dtype), ctx);
}
