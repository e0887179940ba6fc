#pragma once
/// \file
/// `DType`, the element type of a tensor, and the type-promotion rules ops follow
/// (PyTorch's: bool < int64 < float32; comparisons give bool; true division gives float32).
/// symtrace's own kernels compute with float32, int64 and bool; it also holds complex and
/// quantized tensors (a TorchScript model's, made and used by LibTorch's ops), which its own
/// ops refuse (Note [Dtypes symtrace holds], src/ops/dispatch.cpp).

#include <fmt/core.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace symtrace {

/// The element type of a tensor. Enumerators spell PyTorch's names (`bool_` prints as "bool").
/// The first three are computed with by symtrace's kernels; the rest are held only
/// (`is_computed`). Append-only: serialised forms store the name, tests the order.
enum class DType : std::uint8_t {
  float32,
  int64,
  bool_,
  complex64,  ///< held only: a pair of float32 (LibTorch's ComplexFloat)
  quint8,     ///< held only: LibTorch's quantized dtypes, their scale and zero point
  qint8,      ///<   kept by the LibTorch tensor that owns the data
  qint32,
  quint4x2,
  quint2x4
};

/// True for the dtypes symtrace's own kernels compute with (float32, int64, bool); the others
/// are held, and only LibTorch's ops compute with them.
[[nodiscard]] constexpr bool is_computed(DType dtype) noexcept { return dtype <= DType::bool_; }

/// True for LibTorch's quantized dtypes.
[[nodiscard]] constexpr bool is_quantized(DType dtype) noexcept { return dtype >= DType::quint8; }

/// Size in bytes of one element of `dtype` (LibTorch's itemsize: a quint4x2 byte holds two).
[[nodiscard]] constexpr std::size_t element_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::int64: return 8;
    case DType::bool_: return 1;
    case DType::complex64: return 8;
    case DType::quint8:
    case DType::qint8:
    case DType::quint4x2:
    case DType::quint2x4: return 1;
    case DType::qint32: return 4;
  }
  return 1;
}

/// True for floating-point dtypes.
[[nodiscard]] constexpr bool is_floating(DType dtype) noexcept { return dtype == DType::float32; }

/// The name PyTorch uses: "float32", "int64", "bool", "complex64", "quint8", ...
[[nodiscard]] std::string_view name(DType dtype) noexcept;

/// Parses a dtype name ("float32"/"float", "int64"/"long", "bool", and the held dtypes' names);
/// nullopt if unknown.
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view text) noexcept;

/// The dtype both operands are computed in: the higher of the two in bool < int64 < float32 <
/// complex64. A quantized dtype promotes with nothing: the result is `a` (symtrace's ops refuse
/// it before they ask).
[[nodiscard]] constexpr DType promote_types(DType a, DType b) noexcept {
  if (is_quantized(a) || is_quantized(b)) return a;
  auto rank = [](DType d) {
    switch (d) {
      case DType::bool_: return 0;
      case DType::int64: return 1;
      case DType::float32: return 2;
      default: return 3;  // complex64
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

namespace detail {
/// Throws std::invalid_argument: symtrace computes with float32, int64 and bool only.
[[noreturn]] void throw_not_computed(DType dtype);
}  // namespace detail

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

/// Calls `f.template operator()<T>()` with T the C++ element type of `dtype`. Throws
/// std::invalid_argument for a dtype symtrace holds but does not compute with.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32: return f.template operator()<float>();
    case DType::int64: return f.template operator()<std::int64_t>();
    case DType::bool_: break;
    default: detail::throw_not_computed(dtype);
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
