#pragma once
// Internal (symtrace::detail, not part of the API): what counts as an identifier, for the names
// of symbolic dims (core/sym_expr.hpp) and the keys an input path writes bare (graph/input_path.hpp).

#include <string_view>

namespace symtrace::detail {

/// Letters, digits and `_`, not first a digit, and not empty (`N`, `image_sizes`).
[[nodiscard]] constexpr bool is_identifier(std::string_view s) noexcept {
  if (s.empty() || (s.front() >= '0' && s.front() <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace symtrace::detail
