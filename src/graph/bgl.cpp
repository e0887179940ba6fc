// The Boost graph view's out-of-line pieces: what it reads of a graph's storage.
#include "symtrace/graph/bgl.hpp"

#include "graph_impl.hpp"

namespace symtrace::detail {

std::span<const StoredUse> stored_uses(const Graph& graph, std::size_t id) noexcept {
  const UseList& uses = GraphImpl::of(graph).uses(NodeId(static_cast<std::uint32_t>(id)));
  return {uses.data(), uses.size()};
}

std::size_t num_slots(const Graph& graph) { return GraphImpl::of(graph).num_slots(); }

const Node* live_node(const Graph& graph, std::size_t id) noexcept {
  return GraphImpl::of(graph).live_node(NodeId(static_cast<std::uint32_t>(id)));
}

}  // namespace symtrace::detail
