#include "symtrace/core/scalar.hpp"

#include <fmt/format.h>

namespace symtrace {

std::string to_string(const Scalar& scalar) {
  if (scalar.is_bool()) return scalar.to_bool() ? "True" : "False";
  if (scalar.is_integral()) return std::to_string(scalar.to_int());
  return fmt::format("{}", scalar.to_double());
}

}  // namespace symtrace

auto fmt::formatter<symtrace::Scalar>::format(const symtrace::Scalar& s, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(s), ctx);
}
