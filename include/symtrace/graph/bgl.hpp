#pragma once
/// \file
/// Opt-in: a read-only Boost.Graph view of a `Graph`, to run Boost's algorithms on it
/// (topological_sort, breadth_first_search, dijkstra_shortest_paths, ...). This is the only
/// public header that includes Boost.Graph; the umbrella header does not.
///
/// Vertices are node ids; an edge goes from an input to its user and its bundle is the
/// `detail::Use` (argument position). Erased nodes are filtered out of the view; indices of the
/// vertex index map are node ids, below `num_vertices(view)`, as Boost's algorithms require.
///
///     #include <symtrace/graph/bgl.hpp>
///     auto view = symtrace::bgl::view(graph);
///     std::vector<symtrace::bgl::Vertex> order;
///     boost::topological_sort(view, std::back_inserter(order),
///                             boost::vertex_index_map(symtrace::bgl::index_map(view)));
///     const symtrace::Node& first = symtrace::bgl::node(view, order.back());
///
/// The view borrows the graph: it is valid while the graph lives and is not mutated.
///
/// Include this header before any Boost.Graph header (it declares container traits that
/// Boost.Graph's own helpers look up where they are defined); the opposite order is an
/// #error naming the rule.

#include "symtrace/graph/chunked_vector.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/graph/node.hpp"

#include <boost/container/small_vector.hpp>

#ifdef BOOST_GRAPH_DETAIL_CONTAINER_TRAITS_H
#error "include <symtrace/graph/bgl.hpp> before any Boost.Graph header: it declares container traits they use"
#endif

// Boost.Graph's container traits for the out-edge lists (a small_vector is a vector to it).
// Its helpers name them qualified (graph_detail::find, behind edge(u, v, g)), so they are
// declared before those helpers are, and defined below. Include this header before Boost.Graph's.
namespace boost::graph_detail {
struct vector_tag;
struct unstable_tag;
template <class T, std::size_t N, class... R>
vector_tag container_category(const boost::container::small_vector<T, N, R...>& c);
template <class T, std::size_t N, class... R>
unstable_tag iterator_stability(const boost::container::small_vector<T, N, R...>& c);
}  // namespace boost::graph_detail

#include <boost/pending/container_traits.hpp>

#include <cstddef>
#include <cstdint>

// ---- The storage behind Graph ---------------------------------------------------------------
// The Boost.Graph type behind `Graph` (internal: the view below is the public way
// to reach it). Vertices are stored in a `ChunkedVector` selected by `StableVecS`: random
// access (the vertex descriptor is the node id, the vertex index is native), and addresses
// that never move, so `Node&` stays valid as the graph grows. A vertex is never removed from
// the middle: an erased node stays as a dead slot without edges (ids are never reused), and
// rolling back pops slots from the end, in O(1). Edges go from an input to its user; the
// bundle is the use's argument position.

namespace symtrace::detail {
/// The vertex-storage selector: a ChunkedVector.
struct StableVecS {};
/// The out-edge-list selector: a vector holding its first two uses inline. Most nodes have
/// one or two users, so adding a use rarely allocates.
struct SmallVecS {};
template <class T>
using SmallEdgeVector = boost::container::small_vector<T, 2>;

// Boost.Graph's container traits for ChunkedVector (it ships none), found by
// argument-dependent lookup from its generic helpers. Iterators hold the chunk table, which
// moves as it grows: unstable, as std::deque's are.
template <class T>
boost::graph_detail::vector_tag container_category(const ChunkedVector<T>&) {
  return {};
}
template <class T>
boost::graph_detail::unstable_tag iterator_stability(const ChunkedVector<T>&) {
  return {};
}
}  // namespace symtrace::detail

// adjacency_list.hpp calls iterator_stability qualified: that overload must precede it.
namespace boost::graph_detail {
template <class T>
unstable_tag iterator_stability(const symtrace::detail::ChunkedVector<T>& c) {
  return symtrace::detail::iterator_stability(c);
}
template <class T, std::size_t N, class... R>
vector_tag container_category(const boost::container::small_vector<T, N, R...>&) {
  return {};
}
template <class T, std::size_t N, class... R>
unstable_tag iterator_stability(const boost::container::small_vector<T, N, R...>&) {
  return {};
}
}  // namespace boost::graph_detail

// g++ 12 reports the unset past-the-end out-edge iterator inside `edges(g)`'s end iterator,
// which operator== never reads (it compares vertices first), as maybe used uninitialised
// when the out-edge lists are small_vectors; the report is a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#pragma GCC diagnostic pop

namespace boost {
template <class T>
struct container_gen<symtrace::detail::StableVecS, T> {
  using type = symtrace::detail::ChunkedVector<T>;
};
template <class T>
struct container_gen<symtrace::detail::SmallVecS, T> {
  using type = symtrace::detail::SmallEdgeVector<T>;
};
template <>
struct parallel_edge_traits<symtrace::detail::SmallVecS> {
  using type = allow_parallel_edge_tag;
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

using GraphStorage = boost::adjacency_list<SmallVecS, StableVecS, boost::directedS, VertexSlot, Use>;
using Vertex = GraphStorage::vertex_descriptor;

}  // namespace symtrace::detail

#include <boost/graph/filtered_graph.hpp>


namespace symtrace {

namespace detail {
/// The Boost.Graph storage of `graph` (defined with the graph).
[[nodiscard]] const GraphStorage& storage(const Graph& graph);

/// Keeps the vertices of live nodes.
struct IsLive {
  const GraphStorage* storage = nullptr;
  [[nodiscard]] bool operator()(Vertex v) const noexcept;
};
}  // namespace detail

namespace bgl {

/// A vertex of the view (a node id's value).
using Vertex = detail::Vertex;
/// The view type: a `boost::filtered_graph` over the graph's storage.
using View = boost::filtered_graph<detail::GraphStorage, boost::keep_all, detail::IsLive>;

/// A read-only BGL view of `graph`. O(1).
[[nodiscard]] inline View view(const Graph& graph) {
  const detail::GraphStorage& storage = detail::storage(graph);
  return View(storage, boost::keep_all(), detail::IsLive{&storage});
}

/// The vertex index map of the view (identity on node ids).
[[nodiscard]] inline auto index_map(const View& view) { return get(boost::vertex_index, view); }

/// The node of vertex `v`.
[[nodiscard]] inline const Node& node(const View& view, Vertex v) { return view.m_g[v].node; }

/// The vertex of `node`.
[[nodiscard]] inline Vertex vertex(const Node& node) noexcept { return node.id().value; }

}  // namespace bgl
}  // namespace symtrace
