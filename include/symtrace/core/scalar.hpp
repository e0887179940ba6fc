#pragma once
/// \file
/// `Scalar`: a number passed to an op beside tensors (`x + 1`, `clamp(x, 0, 6)`), and the
/// operand types the Tensor operators take, which capture the caller's source location.

#include "symtrace/core/dtype.hpp"

#include <boost/variant2/variant.hpp>

#include <concepts>
#include <cstdint>
#include <string>

namespace symtrace {

/// A C++ arithmetic type usable as a Scalar (bool, integers, floating point).
template <class T>
concept Arithmetic = std::is_arithmetic_v<T>;

/// A bool, integer or floating-point number. Integers are stored as int64, floats as double.
class Scalar {
 public:
  Scalar() noexcept : value_(std::int64_t{0}) {}
  template <Arithmetic T>
  Scalar(T v) noexcept {  // NOLINT: implicit, as numbers are passed to ops
    if constexpr (std::is_same_v<T, bool>) value_ = v;
    else if constexpr (std::is_integral_v<T>) value_ = static_cast<std::int64_t>(v);
    else value_ = static_cast<double>(v);
  }

  [[nodiscard]] bool is_bool() const noexcept { return value_.index() == 0; }
  [[nodiscard]] bool is_integral() const noexcept { return value_.index() == 1; }
  [[nodiscard]] bool is_floating() const noexcept { return value_.index() == 2; }
  /// The dtype a tensor holding this number would have: bool, int64 or float32.
  [[nodiscard]] DType dtype() const noexcept {
    return is_floating() ? DType::float32 : is_integral() ? DType::int64
                                                          : DType::bool_;
  }
  [[nodiscard]] double to_double() const noexcept {
    return boost::variant2::visit([](auto v) { return static_cast<double>(v); }, value_);
  }
  /// The value as an integer (floats are truncated toward zero).
  [[nodiscard]] std::int64_t to_int() const noexcept {
    return boost::variant2::visit([](auto v) { return static_cast<std::int64_t>(v); }, value_);
  }
  [[nodiscard]] bool to_bool() const noexcept {
    return boost::variant2::visit([](auto v) { return v != 0; }, value_);
  }
  /// The value converted to the element type T.
  template <class T>
  [[nodiscard]] T to() const noexcept {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(to_int());
    else return static_cast<T>(to_double());
  }

  friend bool operator==(const Scalar&, const Scalar&) = default;

 private:
  boost::variant2::variant<bool, std::int64_t, double> value_;
};

/// "1", "2.5", "1.0", "True": floats always print as floats, as Python does.
[[nodiscard]] std::string to_string(const Scalar& scalar);
/// A double in Python's repr style: shortest round-trip digits, "1.0" rather than "1", "inf", "nan".
[[nodiscard]] std::string format_double(double value);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::Scalar> : fmt::formatter<std::string_view> {
  auto format(const symtrace::Scalar& s, format_context& ctx) const -> format_context::iterator;
};
