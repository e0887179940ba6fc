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

#include "symtrace/graph/detail/storage.hpp"
#include "symtrace/graph/graph.hpp"

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
