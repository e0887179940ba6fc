// The subgraph rewriter: matches (consistent placeholders, constants, outside users, overlap),
// the replaced graph, and malformed patterns.
#include "support/zoo_checks.hpp"

#include <symtrace/symtrace.hpp>

using namespace symtrace;

namespace {

/// relu(add(a, b)).
Graph add_relu_pattern() {
  Graph p;
  Node& a = p.placeholder("a");
  Node& b = p.placeholder("b");
  p.output(p.call_function("relu", {p.call_function("add", {a, b})}));
  return p;
}

/// relu(sub(a, neg(b))): the same value as relu(add(a, b)), written differently.
Graph sub_neg_relu_replacement() {
  Graph r;
  Node& a = r.placeholder("a");
  Node& b = r.placeholder("b");
  r.output(r.call_function("relu", {r.call_function("sub", {a, r.call_function("neg", {b})})}));
  return r;
}

}  // namespace

TEST_CASE("every match of a pattern is replaced, its inputs bound in order") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& y = g.placeholder("y");
  Node& r1 = g.call_function("relu", {g.call_function("add", {x, y})});
  Node& r2 = g.call_function("relu", {g.call_function("add", {r1, x})});
  g.output(g.call_function("mul", {r2, 2.0}));
  const std::vector<PatternMatch> matches = find_pattern(g, add_relu_pattern());
  REQUIRE(matches.size() == 2);
  CHECK(matches[0].anchor == &r1);
  CHECK(matches[0].inputs == std::vector<Node*>{&x, &y});
  CHECK(matches[1].inputs == std::vector<Node*>{&r1, &x});
  CHECK(replace_pattern(g, add_relu_pattern(), sub_neg_relu_replacement()) == 2);
  CHECK(to_string(g) ==
        "graph():\n"
        "    %x : [num_users=2] = placeholder[target=x]\n"
        "    %y : [num_users=1] = placeholder[target=y]\n"
        "    %neg : [num_users=1] = call_function[target=neg](args = (%y,), kwargs = {})\n"
        "    %sub : [num_users=1] = call_function[target=sub](args = (%x, %neg), kwargs = {})\n"
        "    %relu_2 : [num_users=1] = call_function[target=relu](args = (%sub,), kwargs = {})\n"
        "    %neg_1 : [num_users=1] = call_function[target=neg](args = (%x,), kwargs = {})\n"
        "    %sub_1 : [num_users=1] = call_function[target=sub](args = (%relu_2, %neg_1), kwargs = {})\n"
        "    %relu_3 : [num_users=1] = call_function[target=relu](args = (%sub_1,), kwargs = {})\n"
        "    %mul : [num_users=1] = call_function[target=mul](args = (%relu_3, 2.0), kwargs = {})\n"
        "    return mul\n");
  CHECK_NOTHROW(g.lint());
}

TEST_CASE("a placeholder used twice matches one node, constants must be equal, outside users block a match") {
  Graph pattern;
  Node& a = pattern.placeholder("a");
  pattern.output(pattern.call_function("mul", {pattern.call_function("add", {a, a}), 2.0}));

  Graph g;
  Node& x = g.placeholder("x");
  Node& y = g.placeholder("y");
  Node& same = g.call_function("add", {x, x});
  Node& m1 = g.call_function("mul", {same, 2.0});                            // matches
  Node& m2 = g.call_function("mul", {g.call_function("add", {x, y}), 2.0});  // add(x, y): no
  Node& m3 = g.call_function("mul", {g.call_function("add", {y, y}), 3.0});  // 3.0: no
  Node& shared = g.call_function("add", {y, y});
  Node& m4 = g.call_function("mul", {shared, 2.0});  // the add is used outside: no
  Node& outside = g.call_function("exp", {shared});
  g.output(Argument::list({m1, m2, m3, m4, outside}));
  const std::vector<PatternMatch> matches = find_pattern(g, pattern);
  REQUIRE(matches.size() == 1);
  CHECK(matches[0].anchor == &m1);
  CHECK(matches[0].nodes == std::vector<Node*>{&same, &m1});
}

TEST_CASE("matches do not overlap, and a rewrite keeps a traced model's numerics") {
  struct NetImpl : TypedModule<NetImpl> {
    Tensor forward(const Tensor& x) { return relu(x.add(1.0)).add(relu(x.add(2.0))); }
  };
  auto m = std::make_shared<NetImpl>();
  Graph g = symbolic_trace(*m, {InputSpec(Shape{3, 4})});
  Graph pattern;
  Node& a = pattern.placeholder("a");
  Node& c = pattern.placeholder("c");
  pattern.output(pattern.call_function("relu", {pattern.call_method("add", {a, c})}));
  (void)c;
  // add(a, c) with c a placeholder cannot match add(x, 1.0): placeholders match nodes only.
  CHECK(find_pattern(g, pattern).empty());
  Graph pattern2;
  Node& a2 = pattern2.placeholder("a");
  pattern2.output(pattern2.call_function("relu", {pattern2.call_method("add", {a2, 1.0})}));
  Graph replacement;
  Node& ra = replacement.placeholder("a");
  replacement.output(replacement.call_function("clamp", {replacement.call_method("add", {ra, 1.0}), 0.0}));
  CHECK(replace_pattern(g, pattern2, replacement) == 1);
  CHECK(testing::count_nodes(g, OpKind::call_function, "clamp") == 1);
  CHECK(testing::count_nodes(g, OpKind::call_function, "relu") == 1);
  const Tensor x = randn({3, 4});
  testing::check_tensor(Interpreter(*m, g).run({x}).to_tensor(), DType::float32, {3, 4},
                        m->call({x}).to_tensor().to_vector<double>());
}

TEST_CASE("malformed patterns and replacements are refused before anything changes") {
  Graph g;
  Node& x = g.placeholder("x");
  g.output(g.call_function("relu", {x}));
  const std::string before = to_string(g);
  Graph no_output;
  no_output.call_function("relu", {no_output.placeholder("a")});
  CHECK_THROWS_WITH_AS((void)find_pattern(g, no_output),
                       doctest::Contains("the pattern graph must end with an output returning one node (got no output)"),
                       std::invalid_argument);
  Graph identity;
  identity.output(identity.placeholder("a"));
  CHECK_THROWS_WITH_AS((void)find_pattern(g, identity), doctest::Contains("the pattern returns its placeholder %a"),
                       std::invalid_argument);
  Graph two_inputs;
  Node& p = two_inputs.placeholder("a");
  two_inputs.placeholder("b");
  two_inputs.output(two_inputs.call_function("relu", {p}));
  Graph one_input;
  one_input.output(one_input.call_function("relu", {one_input.placeholder("a")}));
  CHECK_THROWS_WITH_AS(replace_pattern(g, one_input, two_inputs),
                       doctest::Contains("the replacement takes 2 inputs and the pattern 1"), std::invalid_argument);
  CHECK(to_string(g) == before);
}
