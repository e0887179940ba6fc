// Graph::lint(): graphs built through the public API lint cleanly, in every shape; and each
// invariant lint() checks, broken on purpose (through the public API where it can be, through
// GraphTestAccess where only a bug could break it), gives a LintError naming the nodes and the
// broken rule. Every corrupted graph is linted clean first, so each check proves that the
// corruption, and nothing else, is what lint() catches.
#include <doctest/doctest.h>

#include <symtrace/graph/argument.hpp>
#include <symtrace/graph/graph.hpp>
#include <symtrace/graph/lint.hpp>
#include <symtrace/graph/node.hpp>
#include <symtrace/graph/op_kind.hpp>

#include "graph/graph_test_access.hpp"

using namespace symtrace;
using Access = symtrace::detail::GraphTestAccess;

TEST_CASE("graphs built through the public API lint cleanly") {
  Graph graph;
  Node& x = graph.placeholder("x");

  SUBCASE("a chain") {
    Node& relu = graph.call_function("relu", {x});
    Node& neg = graph.call_function("neg", {relu});
    Node& sigmoid = graph.call_function("sigmoid", {neg});
    graph.output(sigmoid);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("a diamond") {
    Node& a = graph.call_function("relu", {x});
    Node& b = graph.call_function("neg", {x});
    Node& add = graph.call_function("add", {a, b});
    graph.output(add);
    CHECK(x.num_users() == 2);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("node references nested in list arguments, and a list output") {
    Node& y = graph.placeholder("y");
    Node& a = graph.call_function("relu", {x});
    Node& cat = graph.call_function("cat", {Argument::list({a, Argument::list({y, x}), 1}), 0});
    graph.output(Argument::list({cat, a}));
    CHECK(x.num_users() == 2);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("keyword arguments that reference nodes") {
    Node& y = graph.placeholder("y");
    Node& add = graph.call_function("add", {x}, {{"other", y}, {"alpha", 2}});
    Node& mul = graph.call_function("mul", {add}, {{"other", Argument::list({x, y})}});
    graph.output(mul);
    CHECK(y.users() == std::vector<Node*>{&add, &mul});
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("a node used twice by one user") {
    Node& add = graph.call_function("add", {x, x});
    graph.output(add);
    CHECK(x.num_users() == 1);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("a graph with an unused placeholder and an unused node") {
    graph.placeholder("unused");
    Node& relu = graph.call_function("relu", {x});
    graph.call_function("neg", {x});
    graph.output(relu);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("after erasing a node") {
    Node& dead = graph.call_function("sigmoid", {x});
    Node& relu = graph.call_function("relu", {x});
    graph.output(relu);
    graph.erase_node(dead);
    CHECK(x.num_users() == 1);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("after replace_all_uses_with, including a user that used the old node twice") {
    Node& y = graph.placeholder("y");
    Node& a = graph.call_function("relu", {x});
    Node& b = graph.call_function("neg", {y});
    Node& add = graph.call_function("add", {a, a}, {{"alpha", a}});
    graph.output(Argument::list({add, a}));
    CHECK(graph.replace_all_uses_with(a, b) == 2);
    CHECK(a.num_users() == 0);
    graph.erase_node(a);
    CHECK_NOTHROW(graph.lint());
    CHECK(graph.replace_all_uses_with(x, y) == 0);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("after moving nodes within the topological order") {
    Node& a = graph.call_function("relu", {x});
    Node& b = graph.call_function("neg", {x});
    Node& add = graph.call_function("add", {a, b});
    graph.output(add);
    graph.move_before(b, a);
    CHECK_NOTHROW(graph.lint());
    graph.move_after(b, a);
    CHECK_NOTHROW(graph.lint());
    graph.move_after(a, b);
    CHECK(x.next() == &b);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("after inserting before and after anchors") {
    Node& relu = graph.call_function("relu", {x});
    Node& output = graph.output(relu);
    {
      auto point = graph.inserting_before(relu);
      graph.call_function("neg", {x});
    }
    {
      auto point = graph.inserting_after(relu);
      Node& first = graph.call_function("sigmoid", {relu});
      Node& second = graph.call_function("tanh", {first});
      output.set_args({second});
    }
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("after dead code elimination") {
    Node& relu = graph.call_function("relu", {x});
    Node& neg = graph.call_function("neg", {relu});
    graph.call_function("sigmoid", {neg});
    graph.output(relu);
    CHECK(graph.eliminate_dead_code() == 2);
    CHECK(graph.size() == 3);
    CHECK_NOTHROW(graph.lint());
  }
  SUBCASE("a copy of a graph with an erased node") {
    Node& dead = graph.call_function("sigmoid", {x});
    Node& relu = graph.call_function("relu", {x, dead});
    graph.output(relu);
    relu.set_args({x});
    graph.erase_node(dead);
    Graph copy(graph);
    CHECK_NOTHROW(copy.lint());
    CHECK(copy.size() == 3);
  }
  SUBCASE("after a checkpoint rolls back erasing, moving and rewiring") {
    Node& a = graph.call_function("relu", {x});
    Node& b = graph.call_function("neg", {x});
    Node& add = graph.call_function("add", {a, b});
    graph.output(add);
    {
      auto checkpoint = graph.checkpoint();
      graph.replace_all_uses_with(a, b);
      graph.erase_node(a);
      graph.move_before(b, x);  // out of order, undone by the rollback
      graph.call_function("sigmoid", {b});
    }
    CHECK(graph.size() == 5);
    CHECK_NOTHROW(graph.lint());
  }
}

TEST_CASE("an empty graph fails lint for want of an output node") {
  Graph graph;
  CHECK_THROWS_WITH_AS(graph.lint(),
                       "graph lint: the graph has no output node: a graph ends with exactly one (call "
                       "Graph::output)",
                       LintError);
}

// The corruption tests share one graph: x -> relu -> neg -> output, ids 0 to 3, linted clean
// before each test corrupts it.
struct Chain {
  Graph graph;
  Node& x = graph.placeholder("x");
  Node& relu = graph.call_function("relu", {x});
  Node& neg = graph.call_function("neg", {relu});
  Node& output = graph.output(neg);
  Chain() { REQUIRE_NOTHROW(graph.lint()); }
};

TEST_CASE_FIXTURE(Chain, "lint rejects a broken node order and names the node") {
  SUBCASE("a next link to a node id that does not exist") {
    Access::set_next_link(relu, NodeId(999));
    CHECK_THROWS_WITH_AS(graph.lint(), "graph lint: the node order refers to node id 999, which does not exist",
                         LintError);
  }
  SUBCASE("a next link to an erased node") {
    Node& dead = graph.call_function("sigmoid", {x});
    const NodeId dead_id = dead.id();
    graph.erase_node(dead);
    REQUIRE_NOTHROW(graph.lint());
    Access::set_next_link(neg, dead_id);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %sigmoid was erased but is still in the node order: erasing must unlink it",
                         LintError);
  }
  SUBCASE("a next link back to an earlier node") {
    Access::set_next_link(neg, x.id());
    CHECK_THROWS_WITH_AS(graph.lint(), "graph lint: the node order loops back to %x: the order must be a list",
                         LintError);
  }
  SUBCASE("a previous link to the wrong node") {
    Access::set_prev_link(neg, x.id());
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %neg: its link to the previous node disagrees with the order (previous is "
                         "%relu, link says %x)",
                         LintError);
  }
  SUBCASE("a missing previous link") {
    Access::set_prev_link(output, NodeId());
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %output: its link to the previous node disagrees with the order (previous is "
                         "%neg, link says none)",
                         LintError);
  }
  SUBCASE("a previous link on the first node") {
    Access::set_prev_link(x, output.id());
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %x: its link to the previous node disagrees with the order (previous is "
                         "none, link says %output)",
                         LintError);
  }
  SUBCASE("an order that ends before the recorded last node") {
    Access::set_next_link(neg, NodeId());
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: the graph's last node is recorded as %output but the order ends at %neg",
                         LintError);
  }
  SUBCASE("a live node left out of the order") {
    Access::set_next_link(relu, output.id());
    Access::set_prev_link(output, relu.id());
    CHECK_THROWS_WITH_AS(graph.lint(), "graph lint: %neg is alive but not in the node order", LintError);
  }
  SUBCASE("an erased node that still has uses") {
    Node& dead = graph.call_function("sigmoid", {x});
    graph.erase_node(dead);
    REQUIRE_NOTHROW(graph.lint());
    Access::add_use(graph, dead, neg, 0);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: erased node %sigmoid still has uses recorded: erasing must drop its users",
                         LintError);
  }
  SUBCASE("a node count that disagrees with the order") {
    Access::impl(graph).live_count += 1;
    CHECK_THROWS_WITH_AS(graph.lint(), "graph lint: the order holds 4 nodes but the graph counts 5", LintError);
    Access::impl(graph).live_count -= 1;
  }
}

TEST_CASE_FIXTURE(Chain, "lint rejects two nodes under one name and a name index out of step") {
  SUBCASE("a later node takes an earlier node's name") {
    Access::copy_name(neg, relu);
    CHECK_THROWS_WITH_AS(graph.lint(), "graph lint: two nodes are named 'relu' (one is id 2): names must be unique",
                         LintError);
  }
  SUBCASE("an earlier node takes a later node's name") {
    Access::copy_name(relu, neg);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %neg (id 1) is not found under its own name: the name index is out of step",
                         LintError);
  }
}

TEST_CASE_FIXTURE(Chain, "lint rejects a placeholder that comes after another node") {
  SUBCASE("created after a call with inserting_after") {
    {
      auto point = graph.inserting_after(relu);
      graph.placeholder("y");
    }
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: placeholder %y comes after %relu (call_function): placeholders must precede "
                         "every other node (create the inputs first)",
                         LintError);
  }
  SUBCASE("created at the end, after the calls") {
    graph.placeholder("y");
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: placeholder %y comes after %relu (call_function): placeholders must precede "
                         "every other node (create the inputs first)",
                         LintError);
  }
  SUBCASE("moved after a call") {
    Node& y = graph.placeholder("y");
    graph.move_after(y, x);
    REQUIRE_NOTHROW(graph.lint());
    graph.move_after(y, neg);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: placeholder %y comes after %relu (call_function): placeholders must precede "
                         "every other node (create the inputs first)",
                         LintError);
  }
  SUBCASE("a get_attr moved before the first placeholder") {
    Node& weight = graph.get_attr("layer.weight");
    REQUIRE_NOTHROW(graph.lint());
    graph.move_before(weight, x);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: placeholder %x comes after %layer_weight (get_attr): placeholders must "
                         "precede every other node (create the inputs first)",
                         LintError);
  }
}

TEST_CASE_FIXTURE(Chain, "lint rejects a graph without exactly one output, the last node, with one argument") {
  SUBCASE("the output node erased") {
    graph.erase_node(output);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: the graph has no output node: a graph ends with exactly one (call "
                         "Graph::output)",
                         LintError);
  }
  SUBCASE("a node moved after the output") {
    Node& sigmoid = graph.call_function("sigmoid", {x});
    REQUIRE_NOTHROW(graph.lint());
    graph.move_after(sigmoid, output);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %sigmoid comes after the output node %output: the output must be the last "
                         "node (insert before it)",
                         LintError);
  }
  SUBCASE("a node inserted after the output") {
    {
      auto point = graph.inserting_after(output);
      graph.call_function("sigmoid", {x});
    }
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %sigmoid comes after the output node %output: the output must be the last "
                         "node (insert before it)",
                         LintError);
  }
  SUBCASE("the output moved before the node it returns") {
    graph.move_before(output, neg);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %neg comes after the output node %output: the output must be the last node "
                         "(insert before it)",
                         LintError);
  }
  SUBCASE("a second output node") {
    Access::set_op(relu, OpKind::output);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: the graph has 2 output nodes (%relu and %output): a graph has exactly one",
                         LintError);
  }
  SUBCASE("an output node the graph did not record") {
    Access::set_op(output, OpKind::call_function);
    Access::set_op(neg, OpKind::output);
    CHECK_THROWS_WITH_AS(graph.lint(), "graph lint: output %neg is not the graph's recorded output node", LintError);
  }
  SUBCASE("an output with two arguments") {
    Access::set_args_raw(output, {neg, relu});
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: output %output has 2 arguments: the output takes exactly one (a list for "
                         "several results)",
                         LintError);
  }
}

TEST_CASE_FIXTURE(Chain, "lint rejects an argument that is not a live node defined before its user") {
  SUBCASE("a user moved before its input") {
    graph.move_before(neg, relu);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %neg uses %relu, which is defined after it: nodes must be in topological "
                         "order (move %neg after its inputs)",
                         LintError);
  }
  SUBCASE("an input moved after its user") {
    graph.move_after(relu, neg);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %neg uses %relu, which is defined after it: nodes must be in topological "
                         "order (move %neg after its inputs)",
                         LintError);
  }
  SUBCASE("a keyword argument defined after its user") {
    Node& mul = graph.call_function("mul", {x}, {{"other", relu}});
    REQUIRE_NOTHROW(graph.lint());
    graph.move_before(mul, relu);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %mul uses %relu, which is defined after it: nodes must be in topological "
                         "order (move %mul after its inputs)",
                         LintError);
  }
  SUBCASE("an argument naming an erased node") {
    Node& dead = graph.call_function("sigmoid", {x});
    const NodeId dead_id = dead.id();
    graph.erase_node(dead);
    REQUIRE_NOTHROW(graph.lint());
    Access::set_args_raw(neg, {dead_id});
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %neg uses erased node %sigmoid at argument position 0, which is not a live "
                         "node of this graph: arguments may only reference nodes of their own graph",
                         LintError);
  }
  SUBCASE("an argument naming a node id that does not exist, inside a list") {
    Access::set_args_raw(neg, {Argument::list({relu, NodeId(999)})});
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %neg uses node id 999 at argument position 1, which is not a live node of "
                         "this graph: arguments may only reference nodes of their own graph",
                         LintError);
  }
}

TEST_CASE_FIXTURE(Chain, "lint rejects users that do not match arguments exactly") {
  SUBCASE("a use missing from the users") {
    Access::remove_uses(graph, relu, neg);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %neg uses %relu at argument position 0, but %relu does not list %neg among "
                         "its users: users must match arguments exactly",
                         LintError);
  }
  SUBCASE("a keyword use missing from the users") {
    Node& mul = graph.call_function("mul", {relu}, {{"other", x}});
    REQUIRE_NOTHROW(graph.lint());
    Access::remove_uses(graph, x, mul);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %mul uses %x at argument position 1, but %x does not list %mul among its "
                         "users: users must match arguments exactly",
                         LintError);
  }
  SUBCASE("a use at a position where the user has no argument") {
    Access::add_use(graph, relu, neg, 1);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %relu lists %neg as a user at argument position 1, but %neg does not use "
                         "%relu there: users must match arguments exactly",
                         LintError);
  }
  SUBCASE("a use at the position of another input") {
    Node& add = graph.call_function("add", {relu, x});
    REQUIRE_NOTHROW(graph.lint());
    Access::remove_uses(graph, relu, add);
    Access::add_use(graph, relu, add, 1);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %relu lists %add as a user at argument position 1, but %add does not use "
                         "%relu there: users must match arguments exactly",
                         LintError);
  }
  SUBCASE("a use by a node that does not use the input") {
    Access::add_use(graph, x, neg, 0);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %x lists %neg as a user at argument position 0, but %neg does not use %x "
                         "there: users must match arguments exactly",
                         LintError);
  }
  SUBCASE("a use listed twice") {
    Access::add_use(graph, relu, neg, 0);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %relu lists the use by %neg at argument position 0 twice: users must match "
                         "arguments exactly",
                         LintError);
  }
  SUBCASE("a use by an erased node") {
    Node& dead = graph.call_function("sigmoid", {x});
    graph.erase_node(dead);
    REQUIRE_NOTHROW(graph.lint());
    Access::add_use(graph, x, dead, 0);
    CHECK_THROWS_WITH_AS(graph.lint(),
                         "graph lint: %x lists erased node %sigmoid as a user: users must be live nodes of this "
                         "graph",
                         LintError);
  }
}

TEST_CASE("lint rejects uses of one user that are not adjacent in the input's users") {
  Graph graph;
  Node& x = graph.placeholder("x");
  Node& add = graph.call_function("add", {x, x});
  Node& neg = graph.call_function("neg", {x});
  graph.output(Argument::list({add, neg}));
  REQUIRE_NOTHROW(graph.lint());

  // The same uses, in the order add@0, neg@0, add@1.
  Access::remove_uses(graph, x, add);
  Access::remove_uses(graph, x, neg);
  Access::add_use(graph, x, add, 0);
  Access::add_use(graph, x, neg, 0);
  Access::add_use(graph, x, add, 1);
  CHECK_THROWS_WITH_AS(graph.lint(),
                       "graph lint: the uses of %x by %add are not adjacent in its users: they must be added and "
                       "removed together",
                       LintError);
}
