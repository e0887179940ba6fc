#pragma once
/// \file
/// Opt-in: a `Graph` as a Boost graph, to run Boost's algorithms on it (topological_sort,
/// breadth_first_search, dijkstra_shortest_paths, write_graphviz, ...). This is the only public
/// header of the graph layer that includes Boost.Graph; the umbrella header does not.
///
/// `bgl::View` models Boost.Graph's IncidenceGraph, AdjacencyGraph, VertexListGraph and
/// EdgeListGraph concepts over the graph's own storage (the way Boost.Graph adapts LEDA's and
/// the Stanford GraphBase's graphs): nothing is copied, and the header can come before or after
/// any Boost.Graph header.
///
/// Vertices are node ids; an edge goes from an input to its user, one per node reference in
/// the user's arguments then keyword arguments, and its bundle (`view[e]`) is the `bgl::Use`
/// (the reference's argument position). Erased nodes are not vertices; indices of the vertex
/// index map are node ids, below `num_vertices(view)`, as Boost's algorithms require. So
/// `num_vertices` is the bound on indices (the node slots, erased ones included), as it is for
/// a `boost::filtered_graph`: after an erase it exceeds the number of vertices `vertices()`
/// gives, and an algorithm that takes it for that number (page_rank's normalisation) counts
/// the erased nodes too.
///
///     #include <symtrace/graph/bgl.hpp>
///     auto view = symtrace::bgl::view(graph);
///     std::vector<symtrace::bgl::Vertex> order;
///     boost::topological_sort(view, std::back_inserter(order));
///     const symtrace::Node& first = symtrace::bgl::node(view, order.back());
///
/// The view borrows the graph: it is valid while the graph lives and is not mutated.

#include "symtrace/graph/graph.hpp"
#include "symtrace/graph/node.hpp"

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <boost/property_map/property_map.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace symtrace {

namespace detail {
/// A use as the graph stores it, in the input's list of uses: the user's id and the position
/// of the reference among the user's node references.
struct StoredUse {
  std::uint32_t user;
  std::uint32_t position;
};
/// The uses of node `id` (an empty span for an erased node). O(1).
[[nodiscard]] std::span<const StoredUse> stored_uses(const Graph& graph, std::size_t id) noexcept;
/// The number of node slots of `graph` (live or erased): node ids are below it. Allocates (the
/// graph's state) only for a moved-from graph.
[[nodiscard]] std::size_t num_slots(const Graph& graph);
/// The node of slot `id`, or nullptr when it was erased.
[[nodiscard]] const Node* live_node(const Graph& graph, std::size_t id) noexcept;
}  // namespace detail

namespace bgl {

/// A vertex: a node id's value.
using Vertex = std::size_t;

/// The edge bundle: the use's argument position.
struct Use {
  std::uint32_t position = 0;
};

/// An edge: a use of `source` by `target`.
struct Edge {
  Vertex source = 0;
  Vertex target = 0;
  Use use;
  friend bool operator==(const Edge& a, const Edge& b) noexcept {
    return a.source == b.source && a.target == b.target && a.use.position == b.use.position;
  }
};

class View;

namespace detail {
/// The out-edges of one vertex.
class OutEdgeIterator : public boost::iterator_facade<OutEdgeIterator, Edge, boost::random_access_traversal_tag, Edge> {
 public:
  OutEdgeIterator() = default;
  OutEdgeIterator(Vertex source, const symtrace::detail::StoredUse* at) noexcept : source_(source), at_(at) {}

 private:
  friend class boost::iterator_core_access;
  [[nodiscard]] Edge dereference() const noexcept { return {source_, at_->user, {at_->position}}; }
  [[nodiscard]] bool equal(const OutEdgeIterator& other) const noexcept { return at_ == other.at_; }
  void increment() noexcept { ++at_; }
  void decrement() noexcept { --at_; }
  void advance(std::ptrdiff_t n) noexcept { at_ += n; }
  [[nodiscard]] std::ptrdiff_t distance_to(const OutEdgeIterator& other) const noexcept { return other.at_ - at_; }
  Vertex source_ = 0;
  const symtrace::detail::StoredUse* at_ = nullptr;
};

/// The users of one vertex, one per use (the targets of its out-edges).
class AdjacencyIterator
    : public boost::iterator_facade<AdjacencyIterator, Vertex, boost::random_access_traversal_tag, Vertex> {
 public:
  AdjacencyIterator() = default;
  explicit AdjacencyIterator(const symtrace::detail::StoredUse* at) noexcept : at_(at) {}

 private:
  friend class boost::iterator_core_access;
  [[nodiscard]] Vertex dereference() const noexcept { return at_->user; }
  [[nodiscard]] bool equal(const AdjacencyIterator& other) const noexcept { return at_ == other.at_; }
  void increment() noexcept { ++at_; }
  void decrement() noexcept { --at_; }
  void advance(std::ptrdiff_t n) noexcept { at_ += n; }
  [[nodiscard]] std::ptrdiff_t distance_to(const AdjacencyIterator& other) const noexcept { return other.at_ - at_; }
  const symtrace::detail::StoredUse* at_ = nullptr;
};

/// The live vertices, in id order.
class VertexIterator : public boost::iterator_facade<VertexIterator, Vertex, boost::forward_traversal_tag, Vertex> {
 public:
  VertexIterator() = default;
  VertexIterator(const Graph* graph, Vertex at, Vertex end) noexcept : graph_(graph), at_(at), end_(end) {
    skip_erased();
  }

 private:
  friend class boost::iterator_core_access;
  [[nodiscard]] Vertex dereference() const noexcept { return at_; }
  [[nodiscard]] bool equal(const VertexIterator& other) const noexcept { return at_ == other.at_; }
  void increment() noexcept {
    ++at_;
    skip_erased();
  }
  void skip_erased() noexcept {
    while (at_ < end_ && symtrace::detail::live_node(*graph_, at_) == nullptr) ++at_;
  }
  const Graph* graph_ = nullptr;
  Vertex at_ = 0;
  Vertex end_ = 0;
};

/// Every edge: the out-edges of each vertex in id order.
class EdgeIterator : public boost::iterator_facade<EdgeIterator, Edge, boost::forward_traversal_tag, Edge> {
 public:
  EdgeIterator() = default;
  EdgeIterator(const Graph* graph, Vertex at, Vertex end) noexcept : graph_(graph), at_(at), end_(end) {
    skip_empty();
  }

 private:
  friend class boost::iterator_core_access;
  [[nodiscard]] Edge dereference() const noexcept {
    const symtrace::detail::StoredUse& use = symtrace::detail::stored_uses(*graph_, at_)[index_];
    return {at_, use.user, {use.position}};
  }
  [[nodiscard]] bool equal(const EdgeIterator& other) const noexcept {
    return at_ == other.at_ && index_ == other.index_;
  }
  void increment() noexcept {
    ++index_;
    skip_empty();
  }
  /// Moves past the end of each vertex's uses to the next vertex that has one left.
  void skip_empty() noexcept {
    while (at_ < end_ && index_ >= symtrace::detail::stored_uses(*graph_, at_).size()) {
      ++at_;
      index_ = 0;
    }
  }
  const Graph* graph_ = nullptr;
  Vertex at_ = 0;
  Vertex end_ = 0;
  std::size_t index_ = 0;
};
}  // namespace detail

/// A read-only Boost graph over a `Graph` (see the file comment). Copying it is O(1).
class View {
 public:
  // Boost.Graph's graph_traits read these.
  using vertex_descriptor = Vertex;
  using edge_descriptor = Edge;
  using directed_category = boost::directed_tag;
  using edge_parallel_category = boost::allow_parallel_edge_tag;
  struct traversal_category : boost::incidence_graph_tag,
                              boost::adjacency_graph_tag,
                              boost::vertex_list_graph_tag,
                              boost::edge_list_graph_tag {};
  using out_edge_iterator = detail::OutEdgeIterator;
  using adjacency_iterator = detail::AdjacencyIterator;
  using vertex_iterator = detail::VertexIterator;
  using edge_iterator = detail::EdgeIterator;
  using degree_size_type = std::size_t;
  using vertices_size_type = std::size_t;
  using edges_size_type = std::size_t;
  using vertex_property_type = boost::no_property;
  using edge_property_type = boost::no_property;
  using graph_property_type = boost::no_property;
  [[nodiscard]] static Vertex null_vertex() noexcept { return static_cast<Vertex>(-1); }

  /// Throws std::bad_alloc only for a moved-from graph, whose state is made here (the view's
  /// other functions then allocate nothing).
  explicit View(const Graph& graph) : graph_(&graph) { (void)symtrace::detail::num_slots(graph); }

  /// The graph viewed.
  [[nodiscard]] const Graph& graph() const noexcept { return *graph_; }
  /// The node of vertex `v` (a live node).
  [[nodiscard]] const Node& operator[](Vertex v) const noexcept { return *symtrace::detail::live_node(*graph_, v); }
  /// The bundle of edge `e`: its argument position.
  [[nodiscard]] Use operator[](const Edge& e) const noexcept { return e.use; }

 private:
  const Graph* graph_;
};

/// A read-only Boost graph view of `graph`. O(1).
[[nodiscard]] inline View view(const Graph& graph) { return View(graph); }

/// The vertex index map of the view (identity on node ids).
[[nodiscard]] inline boost::typed_identity_property_map<Vertex> index_map(const View&) noexcept { return {}; }

/// The node of vertex `v`.
[[nodiscard]] inline const Node& node(const View& view, Vertex v) noexcept { return view[v]; }

/// The vertex of `node`.
[[nodiscard]] inline Vertex vertex(const Node& node) noexcept { return node.id().value; }

// ---- Boost.Graph's free functions, found by argument-dependent lookup ----------------------

[[nodiscard]] inline Vertex source(const Edge& e, const View&) noexcept { return e.source; }
[[nodiscard]] inline Vertex target(const Edge& e, const View&) noexcept { return e.target; }

/// The uses of `v`'s node, in the order its users were given them. O(1).
[[nodiscard]] inline std::pair<detail::OutEdgeIterator, detail::OutEdgeIterator> out_edges(Vertex v, const View& g) noexcept {
  const std::span<const symtrace::detail::StoredUse> uses = symtrace::detail::stored_uses(g.graph(), v);
  return {{v, uses.data()}, {v, uses.data() + uses.size()}};
}
[[nodiscard]] inline std::size_t out_degree(Vertex v, const View& g) noexcept {
  return symtrace::detail::stored_uses(g.graph(), v).size();
}
[[nodiscard]] inline std::pair<detail::AdjacencyIterator, detail::AdjacencyIterator> adjacent_vertices(Vertex v,
                                                                                                       const View& g) noexcept {
  const std::span<const symtrace::detail::StoredUse> uses = symtrace::detail::stored_uses(g.graph(), v);
  return {detail::AdjacencyIterator(uses.data()), detail::AdjacencyIterator(uses.data() + uses.size())};
}

/// The live vertices. O(1) (the iterators skip erased nodes).
[[nodiscard]] inline std::pair<detail::VertexIterator, detail::VertexIterator> vertices(const View& g) noexcept {
  const std::size_t end = symtrace::detail::num_slots(g.graph());
  return {{&g.graph(), 0, end}, {&g.graph(), end, end}};
}
/// The bound on vertex indices (the number of node slots, erased ones included).
[[nodiscard]] inline std::size_t num_vertices(const View& g) noexcept { return symtrace::detail::num_slots(g.graph()); }

/// Every use. O(1) (the iterators skip nodes without users).
[[nodiscard]] inline std::pair<detail::EdgeIterator, detail::EdgeIterator> edges(const View& g) noexcept {
  const std::size_t end = symtrace::detail::num_slots(g.graph());
  return {{&g.graph(), 0, end}, {&g.graph(), end, end}};
}
/// The number of uses. O(V).
[[nodiscard]] inline std::size_t num_edges(const View& g) noexcept {
  std::size_t n = 0;
  for (std::size_t v = 0; v < symtrace::detail::num_slots(g.graph()); ++v) n += out_degree(v, g);
  return n;
}

/// The first use of `u`'s node by `v`'s node, if any. O(out_degree(u)).
[[nodiscard]] inline std::pair<Edge, bool> edge(Vertex u, Vertex v, const View& g) noexcept {
  for (const symtrace::detail::StoredUse& use : symtrace::detail::stored_uses(g.graph(), u)) {
    if (use.user == v) return {Edge{u, v, {use.position}}, true};
  }
  return {Edge{u, v, {}}, false};
}

/// The vertex index map (Boost's `get(vertex_index, g)`), and the index of `v` (its node id).
[[nodiscard]] inline boost::typed_identity_property_map<Vertex> get(boost::vertex_index_t, const View&) noexcept {
  return {};
}
[[nodiscard]] inline Vertex get(boost::vertex_index_t, const View&, Vertex v) noexcept { return v; }

}  // namespace bgl
}  // namespace symtrace

namespace boost {
/// Boost.Graph's algorithms look up the default vertex index map through this trait.
template <>
struct property_map<symtrace::bgl::View, vertex_index_t> {
  using type = typed_identity_property_map<symtrace::bgl::Vertex>;
  using const_type = type;
};
}  // namespace boost
