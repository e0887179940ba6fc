// Common subexpression elimination: equal pure nodes merge (and what uses them then merges
// too); different constants, random ops, in-place ops and module calls stay apart.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>

using namespace symtrace;

namespace {

struct TwiceImpl : TypedModule<TwiceImpl> {
  Tensor forward(const Tensor& x) { return x.mul(3.0).exp().add(x.mul(3.0).exp()).add(x.size(1)); }
};

}  // namespace

TEST_CASE("equal pure nodes merge into the first, and their users merge after them") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& m1 = g.call_method("mul", {x, 2.0});
  Node& m2 = g.call_method("mul", {x, 2.0});
  Node& e1 = g.call_function("exp", {m1});
  Node& e2 = g.call_function("exp", {m2});
  Node& w1 = g.get_attr("fc.weight");
  Node& w2 = g.get_attr("fc.weight");
  Node& s = g.call_function("add", {e1, e2});
  Node& t = g.call_function("add", {w1, w2});
  g.output(Argument::list({s, t}));
  CHECK(eliminate_common_subexpressions(g) == 3);
  CHECK(to_string(g) ==
        "graph():\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    %mul : [num_users=1] = call_method[target=mul](args = (%x, 2.0), kwargs = {})\n"
        "    %exp : [num_users=1] = call_function[target=exp](args = (%mul,), kwargs = {})\n"
        "    %fc_weight : [num_users=1] = get_attr[target=fc.weight]\n"
        "    %add : [num_users=1] = call_function[target=add](args = (%exp, %exp), kwargs = {})\n"
        "    %add_1 : [num_users=1] = call_function[target=add](args = (%fc_weight, %fc_weight), kwargs = {})\n"
        "    return (add, add_1)\n");
  CHECK_NOTHROW(g.lint());
  CHECK(eliminate_common_subexpressions(g) == 0);
}

TEST_CASE("nodes that differ in a constant, a keyword, or have effects are not merged") {
  Graph g;
  Node& x = g.placeholder("x");
  std::vector<Node*> kept{
      &g.call_method("mul", {x, 2.0}),
      &g.call_method("mul", {x, 2.5}),
      &g.call_method("mul", {x, 0.0}),
      &g.call_method("mul", {x, -0.0}),
      &g.call_method("mul", {x, 2}),  // an int is not a double
      &g.call_function("sum", {x}, {{"dim", Argument::list({1})}}),
      &g.call_function("sum", {x}, {{"dim", Argument::list({0})}}),
      &g.call_function("dropout", {x, 0.5, true}),
      &g.call_function("dropout", {x, 0.5, true}),
      &g.call_module("fc", {x}),
      &g.call_module("fc", {x}),
  };
  ArgumentList outs;
  for (Node* n : kept) outs.emplace_back(*n);
  g.output(Argument(std::move(outs)));
  const std::string before = to_string(g);
  CHECK(eliminate_common_subexpressions(g) == 0);
  CHECK(to_string(g) == before);
}

TEST_CASE("equal nodes on either side of a write, or of a module call, are not merged") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& e = g.call_function("exp", {x});
  Node& a = g.call_method("mul", {e, 2.0});
  g.call_method("add_", {e, 1.0});  // e changes here
  Node& b = g.call_method("mul", {e, 2.0});
  Node& c = g.call_module("act", {b});
  Node& d = g.call_method("mul", {e, 2.0});   // after a module call: kept too
  Node& d2 = g.call_method("mul", {e, 2.0});  // equal to d with nothing between: merged
  g.output(Argument::list({a, b, c, d, d2}));
  CHECK(eliminate_common_subexpressions(g) == 1);
  CHECK(g.find_node("mul_3") == nullptr);
  CHECK(g.find_node("mul_2") != nullptr);
  CHECK(g.find_node("mul_1") != nullptr);
}

TEST_CASE("CSE on a traced model keeps its numerics") {
  auto m = std::make_shared<TwiceImpl>();
  Graph g = symbolic_trace(*m, {InputSpec(Shape{2, 3})});
  const std::size_t nodes = g.size();
  CHECK(eliminate_common_subexpressions(g) == 2);
  CHECK(g.size() == nodes - 2);
  const Tensor x = randn({2, 3});
  testing::check_tensor(Interpreter(*m, g).run({x}).to_tensor(), DType::float32, {2, 3},
                        m->call({x}).to_tensor().to_vector<double>());
}
