// The opt-in Boost.Graph view: Boost's algorithms (topological_sort, breadth_first_search,
// write_graphviz) run on a graph through symtrace::bgl::view and its index map; erased nodes
// are absent; edges are uses, one per node reference, carrying the argument position.
//
// Boost.Graph's own headers come first here, an adjacency_list among them: the view works
// with any include order.
// g++ 12 reports the unset past-the-end iterator inside an adjacency_list's edges() iterator,
// which operator== never reads, as maybe used uninitialised: a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#pragma GCC diagnostic pop
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/graph_concepts.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/graph/topological_sort.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/range/iterator_range.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <symtrace/graph/argument.hpp>
#include <symtrace/graph/bgl.hpp>
#include <symtrace/graph/graph.hpp>
#include <symtrace/graph/node.hpp>
#include <symtrace/symtrace.hpp>  // the umbrella and the BGL view together: no name clashes

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace symtrace;

namespace {

/// Every edge of the view as "input->user@position", sorted.
std::vector<std::string> edge_list(const bgl::View& view) {
  std::vector<std::string> edges;
  for (bgl::Vertex v : boost::make_iterator_range(vertices(view))) {
    for (auto e : boost::make_iterator_range(out_edges(v, view))) {
      edges.push_back(fmt::format("{}->{}@{}", bgl::node(view, source(e, view)), bgl::node(view, target(e, view)),
                                  view[e].position));
    }
  }
  std::sort(edges.begin(), edges.end());
  return edges;
}

/// A BFS event visitor that records the names of the vertices in discovery order.
struct RecordDiscovery {
  using event_filter = boost::on_discover_vertex;
  std::vector<std::string>* names;
  template <class G>
  void operator()(bgl::Vertex v, const G& g) const {
    names->push_back(bgl::node(g, v).name());
  }
};

/// The number of node references in the arguments of every node: the number of uses.
std::size_t count_uses(const Graph& graph) {
  std::size_t uses = 0;
  for (const Node& node : graph.nodes()) for_each_node(node.args(), node.kwargs(), [&](NodeId) { ++uses; });
  return uses;
}

}  // namespace

TEST_CASE("Boost's algorithms run on the view of a graph with an erased node and a moved node") {
  // x -> relu, neg -> add(relu, neg, alpha=scale) -> relu_1 -> output. `scale` is created last,
  // moved to the front, and only then used by `add`: its id is above its user's, so id order is
  // not a topological order. `sigmoid` is erased.
  Graph graph;
  Node& x = graph.placeholder("x");
  Node& a = graph.call_function("relu", {x});
  Node& dead = graph.call_function("sigmoid", {x});
  Node& b = graph.call_function("neg", {x});
  Node& add = graph.call_function("add", {a, b});
  Node& relu = graph.call_function("relu", {add});
  graph.output(relu);
  Node& scale = graph.get_attr("scale");
  graph.move_before(scale, a);
  add.set_kwargs({{"alpha", scale}});
  const bgl::Vertex dead_vertex = bgl::vertex(dead);
  graph.erase_node(dead);
  REQUIRE_NOTHROW(graph.lint());

  const bgl::View view = bgl::view(graph);
  const auto index = bgl::index_map(view);

  SUBCASE("the vertices are the live nodes, indexed by node id") {
    std::vector<std::string> names;
    for (bgl::Vertex v : boost::make_iterator_range(vertices(view))) {
      CHECK(get(index, v) == v);
      CHECK(get(index, v) < num_vertices(view));
      CHECK(bgl::vertex(bgl::node(view, v)) == v);
      names.push_back(bgl::node(view, v).name());
    }
    CHECK(names == std::vector<std::string>{"x", "relu", "neg", "add", "relu_1", "output", "scale"});
    CHECK(std::find(names.begin(), names.end(), "sigmoid") == names.end());
    CHECK(&bgl::node(view, bgl::vertex(scale)) == &scale);
  }

  SUBCASE("edges are the uses, with their argument positions") {
    CHECK(edge_list(view) == std::vector<std::string>{"add->relu_1@0", "neg->add@1", "relu->add@0",
                                                      "relu_1->output@0", "scale->add@2", "x->neg@0", "x->relu@0"});
    // boost::edge finds a use by its ends, and nothing between unconnected nodes.
    auto [use, found] = edge(bgl::vertex(b), bgl::vertex(add), view);
    REQUIRE(found);
    CHECK(view[use].position == 1);
    CHECK_FALSE(edge(bgl::vertex(add), bgl::vertex(b), view).second);
    std::size_t out_edge_count = 0;
    for (bgl::Vertex v : boost::make_iterator_range(vertices(view))) out_edge_count += out_degree(v, view);
    CHECK(out_edge_count == count_uses(graph));
    CHECK(num_edges(view) == count_uses(graph));
    CHECK(num_edges(view) == 7);
  }

  SUBCASE("topological_sort orders the live nodes so that every edge goes forward") {
    std::vector<bgl::Vertex> order;
    boost::topological_sort(view, std::back_inserter(order), boost::vertex_index_map(index));
    std::reverse(order.begin(), order.end());  // topological_sort writes the reverse order

    std::vector<std::string> names;
    for (bgl::Vertex v : order) names.push_back(bgl::node(view, v).name());
    CHECK(names == std::vector<std::string>{"scale", "x", "neg", "relu", "add", "relu_1", "output"});
    CHECK(std::find(order.begin(), order.end(), dead_vertex) == order.end());
    CHECK(order.size() == graph.size());

    std::vector<std::size_t> rank(num_vertices(view), std::numeric_limits<std::size_t>::max());
    for (std::size_t i = 0; i < order.size(); ++i) rank[get(index, order[i])] = i;
    std::size_t edges = 0;
    for (bgl::Vertex v : boost::make_iterator_range(vertices(view))) {
      for (auto e : boost::make_iterator_range(out_edges(v, view))) {
        CHECK_MESSAGE(rank[source(e, view)] < rank[target(e, view)],
                      fmt::format("{} -> {}", bgl::node(view, source(e, view)), bgl::node(view, target(e, view))));
        ++edges;
      }
    }
    CHECK(edges == 7);
  }

  SUBCASE("breadth_first_search from the placeholder reaches exactly its transitive users") {
    constexpr std::size_t unreached = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> distance(num_vertices(view), unreached);
    const bgl::Vertex start = bgl::vertex(x);
    distance[start] = 0;
    auto distance_map = boost::make_iterator_property_map(distance.begin(), index);
    std::vector<std::string> discovered;
    boost::breadth_first_search(
        view, start,
        boost::visitor(boost::make_bfs_visitor(std::make_pair(
                           boost::record_distances(distance_map, boost::on_tree_edge()), RecordDiscovery{&discovered})))
            .vertex_index_map(index));

    CHECK(discovered == std::vector<std::string>{"x", "relu", "neg", "add", "relu_1", "output"});
    CHECK(distance[bgl::vertex(x)] == 0);
    CHECK(distance[bgl::vertex(a)] == 1);
    CHECK(distance[bgl::vertex(b)] == 1);
    CHECK(distance[bgl::vertex(add)] == 2);
    CHECK(distance[bgl::vertex(relu)] == 3);
    CHECK(distance[bgl::vertex(*graph.output_node())] == 4);
    CHECK(distance[bgl::vertex(scale)] == unreached);
    CHECK(distance[dead_vertex] == unreached);
  }
}

TEST_CASE("a node used twice and node references in lists give one edge per reference") {
  Graph graph;
  Node& x = graph.placeholder("x");
  Node& y = graph.placeholder("y");
  Node& twice = graph.call_function("add", {x, x});
  Node& cat = graph.call_function("cat", {Argument::list({y, Argument::list({twice, x})}), 0}, {{"out", y}});
  graph.output(Argument::list({cat, twice}));
  REQUIRE_NOTHROW(graph.lint());

  const bgl::View view = bgl::view(graph);
  CHECK(edge_list(view) == std::vector<std::string>{"add->cat@1", "add->output@1", "cat->output@0", "x->add@0",
                                                    "x->add@1", "x->cat@2", "y->cat@0", "y->cat@3"});
  CHECK(num_edges(view) == count_uses(graph));
  CHECK(out_degree(bgl::vertex(x), view) == 3);
  CHECK(x.num_users() == 2);
}

TEST_CASE("the view of an empty graph has no vertices and no edges") {
  Graph graph;
  const bgl::View view = bgl::view(graph);
  auto [first, last] = vertices(view);
  CHECK(first == last);
  CHECK(num_edges(view) == 0);
  std::vector<bgl::Vertex> order;
  boost::topological_sort(view, std::back_inserter(order), boost::vertex_index_map(bgl::index_map(view)));
  CHECK(order.empty());
}

// Boost.Graph's concept checks: the view is an incidence, adjacency, vertex-list and edge-list
// graph, as Boost's algorithms require.
BOOST_CONCEPT_ASSERT((boost::IncidenceGraphConcept<bgl::View>));
BOOST_CONCEPT_ASSERT((boost::AdjacencyGraphConcept<bgl::View>));
BOOST_CONCEPT_ASSERT((boost::VertexListGraphConcept<bgl::View>));
BOOST_CONCEPT_ASSERT((boost::EdgeListGraphConcept<bgl::View>));
BOOST_CONCEPT_ASSERT((boost::ReadablePropertyGraphConcept<bgl::View, bgl::Vertex, boost::vertex_index_t>));

TEST_CASE("the view and a boost::adjacency_list built from its edges give the same topological order and DOT") {
  // A diamond with a node used twice: x -> a, b -> add(a, b, a) -> output.
  Graph graph;
  Node& x = graph.placeholder("x");
  Node& a = graph.call_function("relu", {x});
  Node& b = graph.call_function("neg", {x});
  Node& add = graph.call_function("add", {a, b, a});
  graph.output(add);
  const bgl::View view = bgl::view(graph);

  using Copy = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Copy copy(num_vertices(view));
  for (auto e : boost::make_iterator_range(edges(view))) boost::add_edge(source(e, view), target(e, view), copy);
  CHECK(boost::num_edges(copy) == num_edges(view));
  CHECK(num_edges(view) == 6);

  std::vector<bgl::Vertex> from_view;
  std::vector<std::size_t> from_copy;
  boost::topological_sort(view, std::back_inserter(from_view));
  boost::topological_sort(copy, std::back_inserter(from_copy));
  CHECK(std::vector<std::size_t>(from_view.begin(), from_view.end()) == from_copy);

  std::vector<std::string> adjacent;
  for (bgl::Vertex v : boost::make_iterator_range(adjacent_vertices(bgl::vertex(x), view))) {
    adjacent.push_back(bgl::node(view, v).name());
  }
  CHECK(adjacent == std::vector<std::string>{"relu", "neg"});

  std::ostringstream view_dot;
  std::ostringstream copy_dot;
  boost::write_graphviz(view_dot, view);
  boost::write_graphviz(copy_dot, copy);
  CHECK(view_dot.str() == copy_dot.str());
  CHECK(view_dot.str() == "digraph G {\n0;\n1;\n2;\n3;\n4;\n0->1 ;\n0->2 ;\n1->3 ;\n1->3 ;\n2->3 ;\n3->4 ;\n}\n");
}
