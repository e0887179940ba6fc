// OpKind's spelling: fx's opcode strings, parsed back for JSON and the CLI.
#include "symtrace/graph/op_kind.hpp"

#include <fmt/format.h>

namespace symtrace {

std::string_view name(OpKind kind) noexcept {
  switch (kind) {
    case OpKind::placeholder: return "placeholder";
    case OpKind::get_attr: return "get_attr";
    case OpKind::call_function: return "call_function";
    case OpKind::call_method: return "call_method";
    case OpKind::call_module: return "call_module";
    case OpKind::output: return "output";
  }
  return "?";
}

std::string to_string(OpKind kind) { return std::string(name(kind)); }

std::optional<OpKind> parse_op_kind(std::string_view text) noexcept {
  for (OpKind kind : {OpKind::placeholder, OpKind::get_attr, OpKind::call_function, OpKind::call_method,
                      OpKind::call_module, OpKind::output}) {
    if (name(kind) == text) return kind;
  }
  return std::nullopt;
}

}  // namespace symtrace

auto fmt::formatter<symtrace::OpKind>::format(symtrace::OpKind kind, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::name(kind), ctx);
}
