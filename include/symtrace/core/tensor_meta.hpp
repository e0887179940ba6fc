#pragma once
/// \file
/// `TensorMeta`: what is known about a tensor without its data, its dtype and (possibly partly
/// unknown) shape. Tensors carry it; graph nodes record it for their results.

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/shape.hpp"

#include <fmt/core.h>

#include <string>

namespace symtrace {

/// Dtype and shape of a tensor; dims may be unknown.
struct TensorMeta {
  DType dtype = DType::float32;
  Shape shape;
  friend bool operator==(const TensorMeta&, const TensorMeta&) = default;
};

/// "float32[1, 3, ?]".
[[nodiscard]] std::string to_string(const TensorMeta& meta);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::TensorMeta> : fmt::formatter<std::string_view> {
  auto format(const symtrace::TensorMeta& m, format_context& ctx) const -> format_context::iterator;
};
