#include "symtrace/core/dtype.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace symtrace {

std::string_view name(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::int64: return "int64";
    case DType::bool_: return "bool";
    case DType::complex64: return "complex64";
    case DType::quint8: return "quint8";
    case DType::qint8: return "qint8";
    case DType::qint32: return "qint32";
    case DType::quint4x2: return "quint4x2";
    case DType::quint2x4: return "quint2x4";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view text) noexcept {
  if (text == "float32" || text == "float") return DType::float32;
  if (text == "int64" || text == "long") return DType::int64;
  if (text == "bool") return DType::bool_;
  if (text == "complex64" || text == "cfloat") return DType::complex64;
  for (DType d : {DType::quint8, DType::qint8, DType::qint32, DType::quint4x2, DType::quint2x4})
    if (text == name(d)) return d;
  return std::nullopt;
}

void detail::throw_not_computed(DType dtype) {
  throw std::invalid_argument(fmt::format(
      "symtrace holds {} tensors but computes with float32, int64 and bool only; LibTorch's ops compute with them",
      name(dtype)));
}

std::string to_string(DType dtype) { return std::string(name(dtype)); }

}  // namespace symtrace

auto fmt::formatter<symtrace::DType>::format(symtrace::DType dtype, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::name(dtype), ctx);
}
