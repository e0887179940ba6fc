#pragma once
/// \file
/// `OpKind`: what a graph node does, with torch.fx's six opcodes. Enumerators spell fx's
/// strings, so printing and JSON need no lookup table.

#include <fmt/core.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace symtrace {

/// The opcode of a node, as in torch.fx.
/// - `placeholder`: a graph input; the target is the input's name.
/// - `get_attr`: reads a parameter or buffer; the target is its qualified name.
/// - `call_function`: applies a free function (an op) to the arguments.
/// - `call_method`: calls a method on the first argument (`x.view(...)`, `x.add_(y)`).
/// - `call_module`: calls a submodule; the target is its qualified path.
/// - `output`: the graph's result, held by its single argument.
enum class OpKind : std::uint8_t {
  placeholder,
  get_attr,
  call_function,
  call_method,
  call_module,
  output
};

/// "placeholder", "get_attr", ... (fx's spelling).
[[nodiscard]] std::string_view name(OpKind kind) noexcept;
/// Same as `name(kind)`, as a std::string.
[[nodiscard]] std::string to_string(OpKind kind);
/// The opcode spelled `text`, or nullopt.
[[nodiscard]] std::optional<OpKind> parse_op_kind(std::string_view text) noexcept;

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::OpKind> : fmt::formatter<std::string_view> {
  auto format(symtrace::OpKind kind, format_context& ctx) const -> format_context::iterator;
};
