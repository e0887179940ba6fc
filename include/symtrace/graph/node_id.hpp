#pragma once
/// \file
/// `NodeId`: how arguments, checkpoints and serialised graphs name a node. Ids are per graph,
/// handed out in creation order and never reused, so a copy of a graph (which keeps the ids)
/// needs no pointer remapping.

#include <fmt/core.h>

#include <compare>
#include <cstdint>
#include <functional>

namespace symtrace {

/// A strong 32-bit id of a node within its graph; default-constructed ids are invalid.
struct NodeId {
  static constexpr std::uint32_t invalid_value = 0xffffffffU;

  std::uint32_t value = invalid_value;

  constexpr NodeId() noexcept = default;
  constexpr explicit NodeId(std::uint32_t v) noexcept : value(v) {}

  /// False for a default-constructed id.
  [[nodiscard]] constexpr bool is_valid() const noexcept { return value != invalid_value; }

  friend constexpr bool operator==(NodeId, NodeId) noexcept = default;
  friend constexpr auto operator<=>(NodeId, NodeId) noexcept = default;
};

}  // namespace symtrace

template <>
struct std::hash<symtrace::NodeId> {
  std::size_t operator()(symtrace::NodeId id) const noexcept { return std::hash<std::uint32_t>{}(id.value); }
};

/// Prints `%7` (a node named by id, outside the graph that can give its name).
template <>
struct fmt::formatter<symtrace::NodeId> : fmt::formatter<std::string_view> {
  auto format(symtrace::NodeId id, format_context& ctx) const -> format_context::iterator;
};
