#pragma once
// What the passes ask of a node: the registry's op behind a call, and its integer arguments.

#include "symtrace/graph/node.hpp"
#include "symtrace/ops/registry.hpp"

#include <cstdint>
#include <optional>

namespace symtrace::detail {

/// The registry's op a call_function or call_method node calls, or nullptr (other nodes, or a
/// target the registry does not know).
inline const OpDef* op_of(const Node& node) noexcept {
  if (node.op() != OpKind::call_function && node.op() != OpKind::call_method) return nullptr;
  return OpRegistry::instance().find(node.target());
}

/// The integer argument `i`; nullopt when it is absent, None or not an integer.
inline std::optional<std::int64_t> int_arg(const Node& node, std::size_t i) noexcept {
  if (i >= node.args().size()) return std::nullopt;
  const std::int64_t* v = node.args()[i].get_if<std::int64_t>();
  return v ? std::optional<std::int64_t>(*v) : std::nullopt;
}

}  // namespace symtrace::detail
