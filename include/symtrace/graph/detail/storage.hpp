#pragma once
/// \file
/// The Boost.Graph type behind `Graph` (internal; `symtrace/graph/bgl.hpp` is the public way
/// to reach it). Vertices are stored in a deque selected by `StableVecS`: random access (the
/// vertex descriptor is the node id, the vertex index is native), and addresses that never
/// move, so `Node&` stays valid as the graph grows. A vertex is never removed from the middle:
/// an erased node stays as a dead slot without edges (ids are never reused), and rolling back
/// pops slots from the end, in O(1). Edges go from an input to its user; the bundle is the
/// use's argument position.

#include "symtrace/graph/node.hpp"

#include <boost/pending/container_traits.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>

namespace symtrace::detail {
/// The vertex-storage selector: a deque.
struct StableVecS {};
}  // namespace symtrace::detail

// Container traits of std::deque for Boost.Graph (it ships none); they must precede
// adjacency_list.hpp so that its qualified calls see them.
namespace boost::graph_detail {
template <class T, class A>
vector_tag container_category(const std::deque<T, A>&) {
  return {};
}
template <class T, class A>
unstable_tag iterator_stability(const std::deque<T, A>&) {
  return {};
}
}  // namespace boost::graph_detail

#include <boost/graph/adjacency_list.hpp>

namespace boost {
template <class T>
struct container_gen<symtrace::detail::StableVecS, T> {
  using type = std::deque<T>;
};
namespace detail {
template <>
struct is_random_access<symtrace::detail::StableVecS> {
  enum { value = true };
  using type = mpl::true_;
};
}  // namespace detail
}  // namespace boost

namespace symtrace::detail {

/// The vertex bundle: the node itself.
struct VertexSlot {
  VertexSlot() noexcept = default;
  Node node;
};

/// The edge bundle: a use of the source node by the target node, at `position`, the rank of
/// this reference among all node references in the user's arguments then keyword arguments.
/// Its storage comes from the owning graph's pool (Boost.Graph allocates every directed edge
/// bundle on its own, which would cost a heap block per use).
struct Use {
  std::uint32_t position = 0;

  static void* operator new(std::size_t size);
  static void operator delete(void* pointer, std::size_t size) noexcept;
};

using GraphStorage = boost::adjacency_list<boost::vecS, StableVecS, boost::directedS, VertexSlot, Use>;
using Vertex = GraphStorage::vertex_descriptor;

}  // namespace symtrace::detail
