// Children that take more than tensors, traced as roots of their own by recursive_trace: a
// SymInt parameter becomes a symbolic integer input, a C++ value gets the value seen at its call
// site (a guard of the graph); and a full reduction of a tensor of unknown rank has a known
// shape and dtype, so cond() on it works after a failure. A child taking a dict or an object of
// tensors (torchvision's ImageList, MultiScaleRoIAlign's features) gets the specs of its call.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <string>

using namespace symtrace;
using testing::max_rel_error;

namespace {

/// Scales by a C++ integer: traceable only with that integer's value.
class Scale : public TypedModule<Scale> {
 public:
  Tensor forward(const Tensor& x, std::int64_t factor) { return x * static_cast<double>(factor); }
};

/// Reshapes its input to a number of rows given as a SymInt: works on a symbolic one.
class Rows : public TypedModule<Rows> {
 public:
  Tensor forward(const Tensor& x, SymInt rows) { return x.reshape({rows, -1}).relu(); }
};

/// Calls both with scalars, then reads data: it fails, and its children are traced as roots.
class Parent : public TypedModule<Parent> {
 public:
  Parent() {
    scale = register_module("scale", std::make_shared<Scale>());
    rows = register_module("rows", std::make_shared<Rows>());
    never = register_module("never", std::make_shared<Scale>());
  }
  Tensor forward(const Tensor& x) {
    const Tensor y = rows->call({scale->call({x, std::int64_t{3}}).to_tensor(), std::int64_t{2}}).to_tensor();
    return y.sum().to_bool() ? y : -y;
  }
  std::shared_ptr<Scale> scale;
  std::shared_ptr<Rows> rows;
  std::shared_ptr<Scale> never;
};

/// Reads data: fails, and its output has an unknown rank in its caller's graph.
class Opaque : public TypedModule<Opaque> {
 public:
  Tensor forward(const Tensor& x) { return x.sum().to_bool() ? x : -x; }
};

}  // namespace

TEST_CASE("a child taking a C++ int is traced as a root with the value seen at its call, recorded as a guard") {
  Parent model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 4})});
  CHECK(c.is_failed(model));
  CHECK_FALSE(c.is_failed(*model.scale));
  const Graph* g = c.find(*model.scale);
  REQUIRE(g != nullptr);
  CHECK_NOTHROW(g->lint());
  // Placeholders keep the forward's parameter names; the int is a guard, as concrete_args make.
  const std::vector<std::string> names = model.scale->input_names();
  REQUIRE(names.size() == 2);
  CHECK(g->find_node(names[0])->tensor_meta()->shape == Shape{2, 4});
  REQUIRE(g->guards().size() == 1);
  CHECK(g->guards()[0].input == names[1]);
  CHECK(to_string(g->guards()[0].value) == "3");
  const Tensor x = randn({2, 4});
  CHECK(max_rel_error(Interpreter(*model.scale, *g).run({x, std::int64_t{3}}).to_tensor(),
                      model.scale->call({x, std::int64_t{3}}).to_tensor()) == 0.0);
}

TEST_CASE("a child taking a SymInt is traced as a root with a symbolic integer input") {
  Parent model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 4})});
  const Graph* g = c.find(*model.rows);
  REQUIRE(g != nullptr);
  CHECK_NOTHROW(g->lint());
  CHECK(g->guards().empty());
  const Node* times = g->find_node(model.rows->input_names().at(1));
  REQUIRE(times != nullptr);
  CHECK(times->op() == OpKind::placeholder);
  const Tensor x = randn({2, 4});
  for (std::int64_t n : {1, 2, 4, 8}) {
    CHECK(max_rel_error(Interpreter(*model.rows, *g).run({x, n}).to_tensor(), model.rows->call({x, n}).to_tensor()) == 0.0);
  }
}

TEST_CASE("a child that needs a C++ value and was never called is unvisited, not failed: it has no inputs to trace on") {
  // Issue 49: no failure that is not the model's own. Traced as a root, it would need a value
  // for its int input, which no call gave.
  Parent model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 4})});
  CHECK(c.failure(*model.never) == nullptr);
  CHECK(c.find(*model.never) == nullptr);
  CHECK(c.records().is_unvisited(*model.never));
  CHECK_THROWS_WITH_AS(symbolic_trace(*model.never, {InputSpec(Shape{2, 4})}),
                       doctest::Contains(fmt::format("Scale.forward's input '{}' is int, not a Tensor: give it a value in "
                                                     "concrete_args",
                                                     model.never->input_names().at(1))
                                             .c_str()),
                       std::invalid_argument);
}

TEST_CASE("symbolic_trace takes a SymInt input as InputSpec::symbolic_int(), and refuses it for a C++ int") {
  Rows rows;
  const Graph g = symbolic_trace(rows, {InputSpec(Shape{3, 2}), InputSpec::symbolic_int()});
  CHECK_NOTHROW(g.lint());
  const Tensor x = randn({3, 2});
  CHECK(max_rel_error(Interpreter(rows, g).run({x, std::int64_t{6}}).to_tensor(), rows.call({x, std::int64_t{6}}).to_tensor()) == 0.0);
  Scale scale;
  CHECK_THROWS_WITH_AS(symbolic_trace(scale, {InputSpec(Shape{3, 2}), InputSpec::symbolic_int()}),
                       doctest::Contains(fmt::format("Scale.forward's input '{}' is int, not a SymInt",
                                                     scale.input_names().at(1))
                                             .c_str()),
                       std::invalid_argument);
}

TEST_CASE("a full reduction of a tensor of unknown rank is 0-dim with its dtype, and cond() takes the comparison") {
  // After a failure the output's rank is unknown: sum() is still a 0-dim float, `> 0` a 0-dim bool.
  struct UsesCond : TypedModule<UsesCond> {
    UsesCond() { opaque = register_module("opaque", std::make_shared<Opaque>()); }
    Tensor forward(const Tensor& x) {
      const Tensor h = opaque->call({x}).to_tensor();
      return cond(
                 h.sum() > 0, [](const TensorList& in) -> Value { return in[0].relu(); },
                 [](const TensorList& in) -> Value { return in[0].neg(); }, {h})
          .to_tensor();
    }
    std::shared_ptr<Opaque> opaque;
  };
  UsesCond model;
  RobustTracer tracer;
  tracer.set_result_by_execution(false);  // the opaque module's result stays of unknown rank
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 3})});
  REQUIRE(tracer.failures().size() == 1);  // the opaque module only: cond is traced
  CHECK(tracer.failures()[0].module == "opaque");
  CHECK(to_string(*g.find_node("sum")->tensor_meta()) == "float32[]");
  CHECK(to_string(*g.find_node("gt")->tensor_meta()) == "bool[]");
  CHECK(g.find_node("cond") != nullptr);
  const Tensor x = randn({2, 3});
  CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);
}

TEST_CASE("an op on a tensor of unknown rank takes its dtype from the op; only a full reduction knows its shape") {
  struct Uses : TypedModule<Uses> {
    Uses() { opaque = register_module("opaque", std::make_shared<Opaque>()); }
    Tensor forward(const Tensor& x) {
      const Tensor h = opaque->call({x}).to_tensor();
      const Tensor rows = h.sum({1});
      const Tensor all = (h > 0).to(DType::float32).sum();
      return rows + all;
    }
    std::shared_ptr<Opaque> opaque;
  };
  Uses model;
  RobustTracer tracer;
  tracer.set_result_by_execution(false);  // the opaque module's result stays of unknown rank
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 3})});
  CHECK(to_string(*g.find_node("gt")->tensor_meta()) == "bool[...]");
  CHECK(to_string(*g.find_node("sum")->tensor_meta()) == "float32[...]");  // over dim 1: the rank is unknown
  CHECK(to_string(*g.find_node("sum_1")->tensor_meta()) == "float32[]");   // over every dim
}

namespace {

/// d["a"] + d["b"] * d["n"]: a dict of tensors with an int beside them.
class Pool : public TypedModule<Pool> {
 public:
  Pool() { set_input_names({"feats"}); }
  Tensor forward(const Value& feats) {
    const ValueDict& d = feats.to_dict();
    return d.find("a")->to_tensor() + d.find("b")->to_tensor() * static_cast<double>(d.find("n")->to_int());
  }
};

/// Calls Pool with a dict, then reads data: it fails, and Pool is traced as a root.
class PoolParent : public TypedModule<PoolParent> {
 public:
  PoolParent() { pool = register_module("pool", std::make_shared<Pool>()); }
  Tensor forward(const Tensor& x) {
    ValueDict d;
    d.insert_or_assign("a", x);
    d.insert_or_assign("b", x.relu());
    d.insert_or_assign("n", 2);
    const Tensor y = pool->call({Value(d)}).to_tensor();
    return y.sum().to_bool() ? y : -y;
  }
  std::shared_ptr<Pool> pool;
};

Value pool_input(const Tensor& a, const Tensor& b, std::int64_t n) {
  ValueDict d;
  d.insert_or_assign("a", a);
  d.insert_or_assign("b", b);
  d.insert_or_assign("n", n);
  return d;
}

}  // namespace

TEST_CASE("a child taking a dict of tensors is traced as a root with the specs seen at its call") {
  PoolParent model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 4})});
  CHECK(c.is_failed(model));
  CHECK_FALSE(c.is_failed(*model.pool));
  const std::optional<ObservedCall> seen = c.records().observed_call(*model.pool);
  REQUIRE(seen.has_value());
  REQUIRE(seen->tensors.size() == 1);
  CHECK(to_string(seen->tensors[0]) == "{'a': float32[2, 4], 'b': float32[2, 4], 'n': 2}");
  const Graph* g = c.find(*model.pool);
  REQUIRE(g != nullptr);
  CHECK_NOTHROW(g->lint());
  CHECK(to_string(*g) == R"(graph():
    %feats : [num_users=2] = placeholder[target=feats]
    %getitem : float32[2, 4] [num_users=1] = call_function[target=getitem](args = (%feats, 'a'), kwargs = {})
    %getitem_1 : float32[2, 4] [num_users=1] = call_function[target=getitem](args = (%feats, 'b'), kwargs = {})
    %mul : float32[2, 4] [num_users=1] = call_function[target=mul](args = (%getitem_1, 2.0), kwargs = {})
    %add : float32[2, 4] [num_users=1] = call_function[target=add](args = (%getitem, %mul), kwargs = {})
    return add
)");
  REQUIRE(g->guards().size() == 1);
  CHECK(g->guards()[0].input == "feats.n");
  const Value in = pool_input(randn({2, 4}), randn({2, 4}), 2);
  CHECK(max_rel_error(Interpreter(*model.pool, *g).run({in}).to_tensor(), model.pool->call({in}).to_tensor()) == 0.0);
}
