#pragma once
/// \file
/// `DType`, the element type of a tensor, and the type-promotion rules ops follow
/// (PyTorch's: bool < int64 < float32; comparisons give bool; true division gives float32).

#include <fmt/core.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace symtrace {

/// The element type of a tensor. Enumerators spell PyTorch's names (`bool_` prints as "bool").
enum class DType : std::uint8_t {
  float32,
  int64,
  bool_
};

/// Size in bytes of one element of `dtype`.
[[nodiscard]] constexpr std::size_t element_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::int64: return 8;
    case DType::bool_: return 1;
  }
  return 1;
}

/// True for floating-point dtypes.
[[nodiscard]] constexpr bool is_floating(DType dtype) noexcept { return dtype == DType::float32; }

/// The name PyTorch uses: "float32", "int64", "bool".
[[nodiscard]] std::string_view name(DType dtype) noexcept;

/// Parses a dtype name ("float32"/"float", "int64"/"long", "bool"); nullopt if unknown.
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view text) noexcept;

/// The dtype both operands are computed in: the higher of the two in bool < int64 < float32.
[[nodiscard]] constexpr DType promote_types(DType a, DType b) noexcept {
  auto rank = [](DType d) {
    switch (d) {
      case DType::bool_: return 0;
      case DType::int64: return 1;
      case DType::float32: return 2;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

/// The C++ element type of a dtype.
template <DType D> struct dtype_traits;
template <> struct dtype_traits<DType::float32> { using type = float; };
template <> struct dtype_traits<DType::int64> { using type = std::int64_t; };
template <> struct dtype_traits<DType::bool_> { using type = bool; };

/// The dtype of a C++ element type.
template <class T> constexpr DType dtype_of() noexcept;
template <> constexpr DType dtype_of<float>() noexcept { return DType::float32; }
template <> constexpr DType dtype_of<std::int64_t>() noexcept { return DType::int64; }
template <> constexpr DType dtype_of<bool>() noexcept { return DType::bool_; }

/// Calls `f.template operator()<T>()` with T the C++ element type of `dtype`.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32: return f.template operator()<float>();
    case DType::int64: return f.template operator()<std::int64_t>();
    case DType::bool_: break;
  }
  return f.template operator()<bool>();
}

/// Same as `name(dtype)`, as a std::string (for debuggers and tests).
[[nodiscard]] std::string to_string(DType dtype);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::DType> : fmt::formatter<std::string_view> {
  auto format(symtrace::DType dtype, format_context& ctx) const -> format_context::iterator;
};
