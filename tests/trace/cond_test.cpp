// cond(): control flow kept in the graph. Eager branching, both branches traced into
// subgraphs owned by the graph, the Interpreter picking a branch at run time, and the errors.
#include "support/checks.hpp"
#include "support/cond_modules.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>

using namespace symtrace;
using testing::Gated;
using testing::max_rel_error;

namespace {

/// Two results per branch, of sizes that differ between the branches.
class Pair : public TypedModule<Pair> {
 public:
  Tensor forward(const Tensor& x, const Tensor& y) {
    const TensorList out = cond(
                               (x - y).amax() > 0,
                               [](const TensorList& in) -> Value { return TensorList{in[0] + in[1], in[0].slice(1, 0, 2)}; },
                               [](const TensorList& in) -> Value { return TensorList{in[0] * in[1], in[1]}; }, {x, y})
                               .to_tensor_list();
    return out[0].sum() + out[1].sum();
  }
};

/// A branch that uses a tensor of the enclosing code without passing it as an operand.
class Captures : public TypedModule<Captures> {
 public:
  // clang-format off
  static constexpr int cond_line = __LINE__ + 3;
  Tensor forward(const Tensor& x) {
    const Tensor doubled = x * 2;
    return cond(x.sum() > 0, [&](const TensorList&) -> Value { return doubled.relu(); },
                [](const TensorList& in) -> Value { return in[0]; }, {x})
        .to_tensor();
  }
  // clang-format on
};

/// Branches that return different dtypes.
class Disagrees : public TypedModule<Disagrees> {
 public:
  // clang-format off
  static constexpr int cond_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    return cond(x.sum() > 0, [](const TensorList& in) -> Value { return in[0]; },
                [](const TensorList& in) -> Value { return in[0] > 0; }, {x})
        .to_tensor();
  }
  // clang-format on
};

/// Passes the op calls, module calls and conds it gets to the interposer installed before it, as
/// a trace by execution does with calls on symbolic values.
class PassOut final : public Interposer {
 public:
  Value call_op(const OpCall& call) override {
    if (outer() == nullptr) throw std::logic_error("PassOut: nothing to pass the op call to");
    return outer()->call_op(call);
  }
  Value call_module(Module& module, const ValueList& args, std::source_location where) override {
    return outer() != nullptr ? outer()->call_module(module, args, where) : module.run_forward(args, where);
  }
};

/// A cond whose forward runs with a PassOut installed inside the trace.
class CondBehindInterposer : public TypedModule<CondBehindInterposer> {
 public:
  Tensor forward(const Tensor& x) {
    PassOut pass;
    const InterposerScope scope(pass);
    return cond(
               x.sum() > 0, [](const TensorList& in) -> Value { return in[0].relu(); },
               [](const TensorList& in) -> Value { return in[0].neg(); }, {x})
        .to_tensor();
  }
};

}  // namespace

TEST_CASE("eagerly, cond runs the branch its predicate picks") {
  Gated model;
  const Tensor pos = tensor({1.f, 2.f, 3.f}, {1, 3});
  const Tensor neg = tensor({-1.f, -2.f, -3.f}, {1, 3});
  CHECK(max_rel_error(model.call({pos}).to_tensor(), model.fc(pos).relu()) == 0.0);
  CHECK(model.call({neg}).to_tensor().to_vector<float>() == std::vector<float>{1, 2, 3});
}

TEST_CASE("a symbolic predicate records both branches as subgraphs and one cond node") {
  Gated model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 3})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %x : float32[?, 3] [num_users=2] = placeholder[target=x]
    %sum : float32[] [num_users=1] = call_method[target=sum](args = (%x, [], False), kwargs = {})
    %gt : bool[] [num_users=1] = call_function[target=gt](args = (%sum, 0), kwargs = {})
    %true_graph_0 : [num_users=1] = get_attr[target=true_graph_0]
    %false_graph_0 : [num_users=1] = get_attr[target=false_graph_0]
    %cond : [num_users=1] = call_function[target=higher_order.cond](args = (%gt, %true_graph_0, %false_graph_0, [%x]), kwargs = {})
    %getitem : float32[?, 3] [num_users=1] = call_function[target=getitem](args = (%cond, 0), kwargs = {})
    return getitem
)");
  REQUIRE(g.subgraphs().size() == 2);
  CHECK(to_string(*g.find_subgraph("true_graph_0")) == R"(graph():
    %operand0 : float32[?, 3] [num_users=1] = placeholder[target=operand0]
    %fc : float32[?, 3] [num_users=1] = call_module[target=fc](args = (%operand0,), kwargs = {})
    %relu : float32[?, 3] [num_users=1] = call_method[target=relu](args = (%fc,), kwargs = {})
    return (relu,)
)");
  CHECK(to_string(*g.find_subgraph("false_graph_0")) == R"(graph():
    %operand0 : float32[?, 3] [num_users=1] = placeholder[target=operand0]
    %neg : float32[?, 3] [num_users=1] = call_method[target=neg](args = (%operand0,), kwargs = {})
    return (neg,)
)");
  // The Interpreter takes the branch the data picks, the real submodule included.
  for (float sign : {1.f, -1.f}) {
    CAPTURE(sign);
    const Tensor x = tensor({sign, 2 * sign, 3 * sign, 0.5f * sign, sign, sign}, {2, 3});
    CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);
  }
  // A copy of the graph keeps its subgraphs; a GraphModule runs them too.
  const Graph copy = g;
  CHECK(copy.find_subgraph("false_graph_0") != nullptr);
  auto shared = std::make_shared<Gated>();
  GraphModule gm(shared, g);
  const Tensor x = randn({4, 3});
  CHECK(max_rel_error(gm.call({x}).to_tensor(), shared->call({x}).to_tensor()) == 0.0);
}

TEST_CASE("cond with several results: list results, sizes that differ between branches are unknown") {
  Pair model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{2, 3}), InputSpec(Shape{2, 3})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(*g.find_node("getitem")->tensor_meta()) == "float32[2, 3]");
  CHECK(to_string(*g.find_node("getitem_1")->tensor_meta()) == "float32[2, ?]");  // [2, 2] or [2, 3]
  Generator gen(11);
  for (int i = 0; i < 4; ++i) {
    const Tensor x = randn({2, 3}, gen), y = randn({2, 3}, gen);
    CHECK(max_rel_error(Interpreter(model, g).run({x, y}).to_tensor(), model.call({x, y}).to_tensor()) <= 1e-6);
  }
}

TEST_CASE("cond errors: captured tensors, disagreeing branches, a bad predicate") {
  SUBCASE("a branch capturing a symbolic tensor is told to pass it as an operand") {
    Captures model;
    CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{2})}),
                         doctest::Contains(fmt::format("cond_test.cpp:{}: a symbolic tensor of another trace was used", Captures::cond_line).c_str()),
                         TraceError);
    CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{2})}),
                         doctest::Contains("(a cond() branch gets its tensors through operands)"), TraceError);
    CHECK(TracingState::current() == nullptr);
  }
  SUBCASE("branches returning different dtypes") {
    Disagrees model;
    CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{2})}),
                         doctest::Contains(fmt::format("cond_test.cpp:{}: cond() in the root module (Disagrees): the branches return different things: then_fn returns float32[2], else_fn returns bool[2]; both must return the same number of tensors with the same dtypes and ranks", Disagrees::cond_line).c_str()),
                         TraceError);
  }
  SUBCASE("a predicate that is not a one-element bool tensor") {
    auto same = [](const TensorList& in) -> Value { return in[0]; };
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(cond(tensor({1.f, 2.f}), same, same, {tensor({1.f})}),
                         doctest::Contains(fmt::format("cond_test.cpp:{}: cond(): the predicate must be a bool tensor with one element, got float32[2]", line).c_str()),
                         std::invalid_argument);
  }
}

TEST_CASE("a symbolic predicate reaches the trace through the thread's interposers, as op calls do") {
  SUBCASE("past an interposer installed inside the trace") {
    CondBehindInterposer model;
    const Graph g = symbolic_trace(model, {InputSpec(Shape{2, 3})});
    CHECK_NOTHROW(g.lint());
    CHECK(g.find_node("cond") != nullptr);
    CHECK(g.subgraphs().size() == 2);
    for (float sign : {1.f, -1.f}) {
      const Tensor x = tensor({sign, 2 * sign, 3 * sign, 0.5f * sign, sign, sign}, {2, 3});
      CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);
    }
    CHECK(TracingState::current() == nullptr);
  }
  SUBCASE("with no trace to reach: a TraceError, with or without an interposer") {
    const Tensor pred = Tensor::symbolic(TensorMeta{DType::bool_, Shape{}}, SymbolicRef{~std::uint64_t{0}, 0});
    auto same = [](const TensorList& in) -> Value { return in[0]; };
    CHECK_THROWS_WITH_AS(cond(pred, same, same, {tensor({1.f})}), doctest::Contains("no trace is active on this thread"),
                         TraceError);
    PassOut pass;
    const InterposerScope scope(pass);
    CHECK_THROWS_WITH_AS(cond(pred, same, same, {tensor({1.f})}),
                         doctest::Contains("no symbolic trace is active on this thread to record it"), TraceError);
  }
}

TEST_CASE("rolling a graph back removes the subgraphs added since the checkpoint") {
  Graph g;
  g.add_subgraph("true_graph", Graph());
  {
    Graph::Checkpoint checkpoint = g.checkpoint();
    CHECK(g.add_subgraph("true_graph", Graph()) == "true_graph_1");
    CHECK(g.subgraphs().size() == 2);
    checkpoint.rollback();
  }
  CHECK(g.subgraphs().size() == 1);
  CHECK(g.find_subgraph("true_graph_1") == nullptr);
  CHECK(g.add_subgraph("true_graph", Graph()) == "true_graph_1");
}
