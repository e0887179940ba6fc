// Graph and Node: creation, naming, users, insertion points, editing, copying, dead code.
#include "symtrace/graph.hpp"
#include "symtrace/symtrace.hpp"

// The umbrella header keeps Boost.Graph out of users' translation units (bgl.hpp opts in; every
// Boost.Graph header includes graph_traits.hpp).
#ifdef BOOST_GRAPH_TRAITS_HPP
#error "symtrace/symtrace.hpp must not include Boost.Graph"
#endif

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) out.push_back(n.name());
  return out;
}

std::vector<std::string> names(const std::vector<Node*>& nodes) {
  std::vector<std::string> out;
  for (const Node* n : nodes) out.push_back(n->name());
  return out;
}

}  // namespace

TEST_CASE("nodes are named after their targets and made unique with fx's suffixes") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& a = g.call_function("add", {x, 1});
  Node& b = g.call_function("add", {a, 1});
  Node& c = g.call_function("add", {b, 1});
  Node& conv = g.call_module("layer1.0.conv1", {c});
  Node& w = g.get_attr("layer1.0.conv1.weight");
  Node& m = g.call_method("__mul__", {conv, w});
  Node& camel = g.call_function("BatchNorm", {m});
  g.output(camel);
  CHECK(names(g) == std::vector<std::string>{"x", "add", "add_1", "add_2", "layer1_0_conv1",
                                             "layer1_0_conv1_weight", "mul", "batch_norm", "output"});
  CHECK(conv.target() == "layer1.0.conv1");
  CHECK(m.target() == "__mul__");
  CHECK(g.size() == 9);
  g.lint();
}

TEST_CASE("asked-for names are sanitised and suffixed as fx's namespace does") {
  Graph g;
  CHECK(g.create_node(OpKind::placeholder, "a", {}, {}, "my input").name() == "my_input");
  CHECK(g.create_node(OpKind::placeholder, "b", {}, {}, "a.b..c").name() == "a_b_c");
  CHECK(g.create_node(OpKind::placeholder, "c", {}, {}, "3d").name() == "_3d");
  CHECK(g.create_node(OpKind::placeholder, "d", {}, {}, "").name() == "d");  // empty: from the target
  CHECK(g.create_node(OpKind::placeholder, "e", {}, {}, "-").name() == "_");
  CHECK(g.create_node(OpKind::placeholder, "f", {}, {}, "_.x").name() == "__x");  // a legal `_`, then a run
  CHECK(g.create_node(OpKind::placeholder, "g", {}, {}, "a..").name() == "a_");
  CHECK(g.create_node(OpKind::placeholder, "h", {}, {}, "9.a").name() == "_9_a");
  SUBCASE("a long name with illegal characters, beyond the on-stack buffer") {
    std::string asked = "x", expected = "x";
    for (int i = 0; i < 40; ++i) {
      asked = "blk.-" + std::to_string(i) + asked;
      expected = "blk_" + std::to_string(i) + expected;
    }
    CHECK(g.create_node(OpKind::placeholder, "p", {}, {}, asked).name() == expected);
    CHECK(g.create_node(OpKind::placeholder, "q", {}, {}, asked).name() == expected + "_1");
  }
  SUBCASE("a suffix is read as a number, so add_01 is add_1") {
    CHECK(g.create_node(OpKind::placeholder, "p", {}, {}, "add_01").name() == "add_1");
    CHECK(g.create_node(OpKind::placeholder, "q", {}, {}, "add").name() == "add");
    // The counter moved past the explicit add_1.
    CHECK(g.create_node(OpKind::placeholder, "r", {}, {}, "add").name() == "add_2");
  }
  SUBCASE("a taken explicit suffix counts up from itself") {
    CHECK(g.create_node(OpKind::placeholder, "p", {}, {}, "x_5").name() == "x_5");
    CHECK(g.create_node(OpKind::placeholder, "q", {}, {}, "x_5").name() == "x_6");
    CHECK(g.create_node(OpKind::placeholder, "r", {}, {}, "x").name() == "x");
    CHECK(g.create_node(OpKind::placeholder, "s", {}, {}, "x").name() == "x_7");
  }
  SUBCASE("x_0 is a name of its own, distinct from x") {
    CHECK(g.create_node(OpKind::placeholder, "p", {}, {}, "y_0").name() == "y_0");
    CHECK(g.create_node(OpKind::placeholder, "q", {}, {}, "y").name() == "y");
    CHECK(g.find_node("y_0") != g.find_node("y"));
  }
  SUBCASE("a huge suffix does not allocate a huge table and stays unique") {
    CHECK(g.create_node(OpKind::placeholder, "p", {}, {}, "z_999999999").name() == "z_999999999");
    CHECK(g.create_node(OpKind::placeholder, "q", {}, {}, "z_999999999").name() == "z_1000000000");
    CHECK(g.find_node("z_999999999") != nullptr);
  }
}

TEST_CASE("find_node finds live nodes by name and id, and erased names stay taken") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& r = g.call_function("relu", {x});
  Node& r1 = g.call_function("relu", {x});
  g.output(Argument::list({r, r1}));
  CHECK(g.find_node("relu") == &r);
  CHECK(g.find_node("relu_1") == &r1);
  CHECK(g.find_node("relu_2") == nullptr);
  CHECK(g.find_node("nothing") == nullptr);
  CHECK(g.find_node(r.id()) == &r);
  CHECK(g.find_node(NodeId(77)) == nullptr);
  CHECK_THROWS_AS((void)g.node(NodeId(77)), std::invalid_argument);

  g.output_node()->set_args({r});
  g.erase_node(r1);
  CHECK(g.find_node("relu_1") == nullptr);
  CHECK(g.find_node(r1.id()) == nullptr);
  // As in fx, a name is never handed out twice in a graph's life.
  CHECK(g.call_function("relu", {x}).name() == "relu_2");
  g.lint();
}

TEST_CASE("users are distinct, in the order they started using a node") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& y = g.placeholder("y");
  Node& twice = g.call_function("add", {x, x});
  Node& cat = g.call_function("cat", {Argument::list({y, x, y}), 0});
  Node& kw = g.call_function("where", {y}, {{"other", x}});
  g.output(Argument::list({twice, cat, kw}));
  CHECK(names(x.users()) == std::vector<std::string>{"add", "cat", "where"});
  CHECK(x.num_users() == 3);
  CHECK(names(y.users()) == std::vector<std::string>{"cat", "where"});
  CHECK(names(cat.input_nodes()) == std::vector<std::string>{"y", "x"});
  CHECK(names(kw.input_nodes()) == std::vector<std::string>{"y", "x"});
  CHECK(twice.num_users() == 1);
  CHECK(kw.kwarg("other") != nullptr);
  CHECK(kw.kwarg("other")->get_if<NodeId>() != nullptr);
  CHECK(kw.kwarg("missing") == nullptr);
  g.lint();
}

TEST_CASE("bad arguments are refused with a message naming the caller and nothing changes") {
  Graph g;
  Node& x = g.placeholder("x");
  std::string before = to_string(g);
  SUBCASE("a node id that is not in the graph") {
    constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(g.call_function("relu", {NodeId(42)}),
                         doctest::Contains(fmt::format("graph_test.cpp:{}: call_function[target=relu]: argument 0 "
                                                       "refers to node %42, which is not a node of this graph",
                                                       line)
                                               .c_str()),
                         std::invalid_argument);
  }
  SUBCASE("a keyword given twice") {
    CHECK_THROWS_WITH_AS(g.call_function("f", {x}, {{"a", 1}, {"a", 2}}),
                         doctest::Contains("keyword argument 'a' is given twice"), std::invalid_argument);
  }
  SUBCASE("a second output") {
    g.output(x);
    before = to_string(g);
    CHECK_THROWS_WITH_AS(g.output(x), doctest::Contains("the graph already has an output node %output"),
                         std::invalid_argument);
  }
  SUBCASE("an output with two arguments") {
    CHECK_THROWS_WITH_AS(g.create_node(OpKind::output, "output", {x, x}),
                         doctest::Contains("output: takes exactly one argument"), std::invalid_argument);
  }
  SUBCASE("a node of another graph") {
    Graph other;
    Node& foreign = other.placeholder("foreign");
    CHECK_THROWS_WITH_AS(g.erase_node(foreign), doctest::Contains("erase_node: %foreign is not a node of this graph"),
                         std::invalid_argument);
  }
  SUBCASE("a node that uses itself") {
    Node& r = g.call_function("relu", {x});
    before = to_string(g);
    CHECK_THROWS_WITH_AS(r.set_args({r}), doctest::Contains("%relu: a node cannot use itself"),
                         std::invalid_argument);
  }
  CHECK(to_string(g) == before);
  CHECK(g.find_node("relu_1") == nullptr);
}

TEST_CASE("erasing a node that still has users throws and leaves the graph unchanged") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& a = g.call_function("relu", {x});
  Node& b = g.call_function("neg", {x});
  g.output(Argument::list({a, b}));
  std::string before = to_string(g);
  CHECK_THROWS_WITH_AS(g.erase_node(x),
                       doctest::Contains("erase_node: %x still has users (%relu, %neg); replace its uses first"),
                       std::invalid_argument);
  CHECK(to_string(g) == before);
  g.lint();
}

TEST_CASE("replace_all_uses_with rewires every user, in positional, list and keyword arguments") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& y = g.placeholder("y");
  Node& a = g.call_function("add", {x, x});
  Node& b = g.call_function("cat", {Argument::list({x, y})}, {{"out", x}});
  g.output(Argument::list({a, b}));
  CHECK(g.replace_all_uses_with(x, y) == 2);
  CHECK(x.num_users() == 0);
  CHECK(names(y.users()) == std::vector<std::string>{"cat", "add"});
  CHECK(a.args() == Arguments{y, y});
  CHECK(b.args() == Arguments{Argument::list({y, y})});
  CHECK(*b.kwarg("out") == Argument(y));
  g.lint();
  g.erase_node(x);
  g.lint();

  SUBCASE("the replacement keeps its own use of the old node (x -> relu(x) insertion)") {
    Node& r = [&]() -> Node& {
      auto point = g.inserting_after(y);
      return g.call_function("relu", {y});
    }();
    CHECK(g.replace_all_uses_with(y, r) == 2);
    CHECK(names(y.users()) == std::vector<std::string>{"relu"});
    CHECK(names(r.users()) == std::vector<std::string>{"cat", "add"});
    g.lint();
  }
}

TEST_CASE("insertion points put new nodes before or after an anchor and are restored") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& r = g.call_function("relu", {x});
  g.output(r);
  g.call_function("tail", {x});  // default: the end, before the output
  {
    auto point = g.inserting_before(r);
    g.call_function("first", {x});
    g.call_function("second", {x});
  }
  {
    auto point = g.inserting_after(x);
    g.call_function("third", {x});
    g.call_function("fourth", {x});
    {
      auto inner = g.inserting_before(*g.output_node());
      g.call_function("fifth", {x});
    }
    g.call_function("sixth", {x});  // back to after "fourth"
  }
  g.call_function("seventh", {x});
  CHECK(names(g) == std::vector<std::string>{"x", "third", "fourth", "sixth", "first", "second", "relu", "tail",
                                             "fifth", "seventh", "output"});
  SUBCASE("an insertion point whose anchor was erased refuses to insert") {
    Node& lone = g.call_function("lone", {x});
    auto point = g.inserting_before(lone);
    g.erase_node(lone);
    CHECK_THROWS_WITH_AS(g.call_function("late", {x}), doctest::Contains("the insertion point's anchor node was erased"),
                         std::invalid_argument);
  }
}

TEST_CASE("moving nodes changes the order, and iteration survives erasing the current node") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& a = g.call_function("a", {x});
  Node& b = g.call_function("b", {x});
  Node& c = g.call_function("c", {x});
  g.output(Argument::list({a, b, c}));
  g.move_before(c, a);
  CHECK(names(g) == std::vector<std::string>{"x", "c", "a", "b", "output"});
  g.move_after(c, b);
  CHECK(names(g) == std::vector<std::string>{"x", "a", "b", "c", "output"});
  g.lint();
  std::vector<std::string> reversed;
  for (const Node& n : g.nodes().reversed()) reversed.push_back(n.name());
  CHECK(reversed == std::vector<std::string>{"output", "c", "b", "a", "x"});

  g.output_node()->set_args({x});
  std::vector<std::string> visited;
  for (Node& n : g.nodes()) {
    visited.push_back(n.name());
    if (n.op() == OpKind::call_function) g.erase_node(n);
  }
  CHECK(visited == std::vector<std::string>{"x", "a", "b", "c", "output"});
  CHECK(names(g) == std::vector<std::string>{"x", "output"});
  g.lint();
}

TEST_CASE("eliminate_dead_code removes unused pure nodes and keeps impure ones") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& unused_input = g.placeholder("unused");
  Node& dead1 = g.call_function("relu", {x});
  g.call_function("neg", {dead1});  // dead chain: neg then relu
  g.call_method("add_", {x, 1});    // in place: kept
  Node& marked = g.call_function("print", {x});
  marked.set_impure();
  g.get_attr("weight");  // unused parameter read: removed
  g.call_module("unused_child", {x});
  Node& live = g.call_function("sigmoid", {x});
  g.output(live);
  CHECK(g.eliminate_dead_code() == 4);
  CHECK(names(g) == std::vector<std::string>{"x", "unused", "add_", "print", "sigmoid", "output"});
  CHECK(unused_input.num_users() == 0);
  CHECK(g.eliminate_dead_code() == 0);
  g.lint();
}

TEST_CASE("metadata: tensor meta, scope, source location and free-form entries") {
  Graph g;
  Node& x = g.placeholder("x");
  constexpr int line = __LINE__ + 1;
  Node& r = g.call_function("relu", {x});
  CHECK(r.where().line() == line);
  CHECK(std::string(r.where().file_name()).ends_with("graph_test.cpp"));
  CHECK(r.tensor_meta() == nullptr);
  r.set_tensor_meta(TensorMeta{DType::float32, Shape{1, Dim(), 4}});
  REQUIRE(r.tensor_meta() != nullptr);
  CHECK(to_string(*r.tensor_meta()) == "float32[1, ?, 4]");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{1, Dim(), 4}});
  CHECK(x.tensor_meta() == r.tensor_meta());  // interned: one copy per distinct meta
  r.set_scope("encoder.block1");
  CHECK(r.scope() == "encoder.block1");
  CHECK(x.scope().empty());
  r.set_meta("note", "hello");
  r.set_meta("count", 3);
  r.set_meta("note", "again");
  REQUIRE(r.meta("note") != nullptr);
  CHECK(*r.meta("note") == Argument("again"));
  CHECK(r.meta().size() == 2);
  CHECK(r.erase_meta("count"));
  CHECK_FALSE(r.erase_meta("count"));
  CHECK(r.meta("count") == nullptr);
  r.set_tensor_meta(std::nullopt);
  CHECK(r.tensor_meta() == nullptr);
}

TEST_CASE("a copy has the same ids, names, order, users and metadata, and is independent") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& y = g.placeholder("y");
  Node& a = g.call_function("add", {x, y}, {{"alpha", 2.0}});
  a.set_tensor_meta(TensorMeta{DType::int64, Shape{3}});
  a.set_meta("k", "v");
  a.set_scope("blk");
  Node& dead = g.call_function("neg", {x});
  Node& b = g.call_function("mul", {a, x});
  g.move_before(b, dead);
  g.erase_node(dead);
  g.output(b);

  Graph copy(g);
  CHECK(to_string(copy) == to_string(g));
  copy.lint();
  Node* ca = copy.find_node("add");
  REQUIRE(ca != nullptr);
  CHECK(ca->id() == a.id());
  CHECK(&ca->graph() == &copy);
  CHECK(ca->tensor_meta() != a.tensor_meta());
  CHECK(*ca->tensor_meta() == *a.tensor_meta());
  CHECK(ca->scope() == "blk");
  CHECK(*ca->meta("k") == Argument("v"));
  CHECK(names(copy.find_node("x")->users()) == names(x.users()));
  // Counters were copied: the next "neg" is neg_1 in both.
  CHECK(copy.call_function("neg", {*copy.find_node("x")}).name() == "neg_1");
  CHECK(g.find_node("neg_1") == nullptr);
  CHECK(g.call_function("neg", {x}).name() == "neg_1");

  SUBCASE("assignment and moves") {
    Graph assigned;
    assigned.placeholder("z");
    assigned = copy;
    CHECK(to_string(assigned) == to_string(copy));
    Node* node = assigned.find_node("add");
    Graph moved(std::move(assigned));
    CHECK(moved.find_node("add") == node);  // nodes stay put
    CHECK(&node->graph() == &moved);
    CHECK(assigned.empty());  // NOLINT: the moved-from graph is empty and usable
    assigned.placeholder("fresh");
    CHECK(assigned.size() == 1);
  }
}

TEST_CASE("placeholders with defaults and node formatting by name") {
  Graph g;
  Node& x = g.create_node(OpKind::placeholder, "x", {3});
  CHECK(fmt::format("{}", x) == "x");
  CHECK(x.args() == Arguments{3});
}

TEST_CASE("every name reads back as its node, generated suffixes included") {
  Graph g;
  std::vector<Node*> made;
  made.push_back(&g.create_node(OpKind::placeholder, "a", {}, {}, "x_3999999998"));
  for (int i = 0; i < 2; ++i) made.push_back(&g.create_node(OpKind::placeholder, "b", {}, {}, "x"));
  made.push_back(&g.create_node(OpKind::placeholder, "c", {}, {}, "y_4000000000"));  // too big: part of the base
  made.push_back(&g.create_node(OpKind::placeholder, "d", {}, {}, "y_4000000000"));
  for (const Node* n : made) {
    CAPTURE(n->name());
    CHECK(g.find_node(n->name()) == n);
  }
  CHECK(made[1]->name() == "x");
  CHECK(made[2]->name() == "x_3999999999");
  CHECK(made[3]->name() == "y_4000000000");
  CHECK(made[4]->name() == "y_4000000000_1");
  CHECK_THROWS_AS(g.create_node(OpKind::placeholder, "e", {}, {}, "x"), std::length_error);
  g.output(*made[0]);
  g.lint();
}

TEST_CASE("asking many times for one explicit name counts on from the counter, without a scan") {
  Graph g;
  for (int i = 0; i < 20000; ++i) g.create_node(OpKind::placeholder, "p", {}, {}, "add_1");
  CHECK(g.find_node("add_1") != nullptr);
  CHECK(g.find_node("add_20000") != nullptr);
  CHECK(g.find_node("add_20001") == nullptr);
  CHECK(g.create_node(OpKind::placeholder, "q", {}, {}, "add").name() == "add");
  CHECK(g.create_node(OpKind::placeholder, "r", {}, {}, "add").name() == "add_20001");
}

TEST_CASE("a copy outlives its original and keeps working") {
  auto original = std::make_unique<Graph>();
  Node& x = original->placeholder("x");
  x.set_scope("encoder.block1.attention.qkv_projection");
  original->call_function("relu", {x}).set_tensor_meta(TensorMeta{DType::float32, Shape{2}});
  Graph copy(*original);
  original.reset();
  Node& r = copy.call_function("relu", {*copy.find_node("x")});
  r.set_scope("encoder.block1.attention.qkv_projection");
  r.set_tensor_meta(TensorMeta{DType::float32, Shape{2}});
  CHECK(r.name() == "relu_1");
  CHECK(copy.find_node("x")->scope() == "encoder.block1.attention.qkv_projection");
  CHECK(r.tensor_meta() == copy.find_node("relu")->tensor_meta());
}

TEST_CASE("inserting_after goes on after the nearest live node when the last one inserted was erased") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& a = g.call_function("a", {x});
  g.output(a);
  auto point = g.inserting_after(a);
  Node& t = g.call_function("t", {a});
  g.erase_node(t);
  g.call_function("u", {a});
  CHECK(names(g) == std::vector<std::string>{"x", "a", "u", "output"});
}

TEST_CASE("an erased node's arguments cannot change, and inputs must belong to the node's graph") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& b = g.call_function("neg", {x});
  g.output(x);
  g.erase_node(b);
  CHECK_THROWS_WITH_AS(b.set_args({x}), doctest::Contains("%neg was erased"), std::invalid_argument);
  Graph other;
  Node& foreign = other.placeholder("q");
  Node& r = g.call_function("relu", {x});
  CHECK_THROWS_WITH_AS(r.replace_input_with(x, foreign),
                       doctest::Contains("replace_input_with: %q is not a node of the graph of %relu"),
                       std::invalid_argument);
  CHECK(r.args() == Arguments{x});
  g.lint();
}
