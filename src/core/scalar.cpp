#include "symtrace/core/scalar.hpp"

#include <fmt/format.h>

namespace symtrace {

std::string format_double(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eni") == std::string::npos) text += ".0";  // "1" -> "1.0"; inf, nan, 1e+20 stay
  return text;
}

std::string to_string(const Scalar& scalar) {
  if (scalar.is_bool()) return scalar.to_bool() ? "True" : "False";
  if (scalar.is_integral()) return std::to_string(scalar.to_int());
  return format_double(scalar.to_double());
}

}  // namespace symtrace

auto fmt::formatter<symtrace::Scalar>::format(const symtrace::Scalar& s, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(s), ctx);
}
