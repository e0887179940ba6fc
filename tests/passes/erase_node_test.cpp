// graph_erase_node and eliminate_dead_code: what goes, what stays (graph inputs, in-place and
// random ops), and refusals that leave the graph unchanged.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>

using namespace symtrace;

namespace {

/// x -> relu -> neg -> exp (unused), and x returned.
Graph chain() {
  Graph g;
  Node& x = g.placeholder("x");
  Node& a = g.call_function("relu", {x});
  Node& b = g.call_function("neg", {a});
  g.call_function("exp", {b});
  g.output(x);
  return g;
}

}  // namespace

TEST_CASE("graph_erase_node removes a node and the chain of inputs only it used") {
  Graph g = chain();
  CHECK(graph_erase_node(g, *g.find_node("exp")) == 3);
  CHECK(to_string(g) ==
        "graph():\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    return x\n");
  CHECK_NOTHROW(g.lint());
}

TEST_CASE("graph_erase_node stops at an input something else uses, a graph input and an in-place op") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& a = g.call_function("relu", {x});
  Node& inplace = g.call_method("add_", {a, 1.0});
  Node& b = g.call_function("neg", {inplace});
  Node& c = g.call_function("exp", {b});
  Node& d = g.call_function("sigmoid", {a});
  g.output(d);
  (void)c;
  CHECK(graph_erase_node(g, *g.find_node("exp")) == 2);  // exp, neg; add_ writes into a
  CHECK(g.find_node("add_") != nullptr);
  CHECK(g.find_node("relu") != nullptr);
  CHECK_NOTHROW(g.lint());
}

TEST_CASE("graph_erase_node refuses a node with users or of another graph, and nothing changes") {
  Graph g = chain();
  const std::string before = to_string(g);
  CHECK_THROWS_WITH_AS(graph_erase_node(g, *g.find_node("relu")),
                       doctest::Contains("graph_erase_node: %relu is still used by %neg; replace its uses first"),
                       std::invalid_argument);
  Graph other = chain();
  CHECK_THROWS_WITH_AS(graph_erase_node(g, *other.find_node("exp")),
                       doctest::Contains("graph_erase_node: %exp belongs to another graph"), std::invalid_argument);
  CHECK(to_string(g) == before);
}

TEST_CASE("dead code elimination removes unused chains and keeps what has effects") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& a = g.call_function("relu", {x});
  g.call_function("exp", {g.call_function("neg", {a})});  // dead chain
  g.call_function("dropout", {x, 0.5, true});             // random: the stream moves on
  g.call_method("mul_", {a, 2.0});                        // in-place
  Node& marked = g.call_function("sigmoid", {x});
  marked.set_impure();
  g.output(a);
  CHECK(eliminate_dead_code(g) == 2);
  CHECK(g.find_node("exp") == nullptr);
  CHECK(g.find_node("neg") == nullptr);
  CHECK(g.find_node("dropout") != nullptr);
  CHECK(g.find_node("mul_") != nullptr);
  CHECK(g.find_node("sigmoid") != nullptr);
  CHECK(has_side_effects(*g.find_node("dropout")));
  CHECK_FALSE(has_side_effects(*g.find_node("relu")));
  CHECK(eliminate_dead_code(g) == 0);
  CHECK_NOTHROW(g.lint());
}
