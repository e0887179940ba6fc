// Interpreter: traced graphs run on concrete tensors give the eager result; errors name the
// node being executed.
#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"
#include "support/checks.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <string>

using namespace symtrace;

namespace {

/// A model with every kind of node: get_attr, call_function, call_method, call_module, and a
/// list result split by getitem.
class Mixed : public TypedModule<Mixed> {
 public:
  Mixed() {
    fc = register_module("fc", nn::Linear(6, 6));
    bias = register_buffer("bias", full({6}, 0.5));
    (void)register_buffer("scratch", zeros({1}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) {
    Tensor h = fc(x).relu() + bias;
    std::vector<Tensor> parts = h.chunk(2, 1);
    return (parts[0] * parts[1]).sum({1}, true);
  }
  nn::Linear fc{nullptr};
  Tensor bias;
};

using testing::max_rel_error;

}  // namespace

TEST_CASE("a traced graph run by the interpreter equals the eager forward") {
  Mixed model;
  Tensor x = randn({4, 6});
  Graph g = symbolic_trace(model, {x});
  CHECK_NOTHROW(g.lint());
  CHECK(g.find_node("getitem") != nullptr);
  CHECK(g.find_node("bias") != nullptr);
  Tensor traced = Interpreter(model, g).run({x}).to_tensor();
  Tensor eager = model.call({x}).to_tensor();
  CHECK(traced.shape() == Shape{4, 1});
  CHECK(max_rel_error(traced, eager) <= 1e-5);
}

TEST_CASE("zoo models traced with an unknown batch run equal to eager") {
  // rnn makes its initial state with zeros({x.size(0), hidden}): a proxy SymInt sizes it.
  for (std::string name : {"resnet18", "mobilenet_v2", "deep_mlp_1000", "unet_small", "rnn"}) {
    CAPTURE(name);
    auto model = zoo::create(name);
    model->eval();
    const zoo::ModelInfo& info = zoo::info(name);
    IntList sizes = info.inputs.at(0).shape;
    if (sizes.size() == 4) sizes[2] = sizes[3] = 32;  // small images keep the test fast
    Shape spec(sizes);
    spec[0] = Dim::unknown();
    Graph g = symbolic_trace(*model, {InputSpec(spec, info.inputs.at(0).dtype)});
    CHECK_NOTHROW(g.lint());
    Generator gen(5);
    Tensor x = info.inputs.at(0).dtype == DType::int64 ? zoo::example_inputs(info, gen).at(0) : randn(sizes);
    Tensor traced = Interpreter(*model, g).run({x}).to_tensor();
    Tensor eager = model->call({x}).to_tensor();
    CHECK(max_rel_error(traced, eager) <= 1e-5);
  }
}

TEST_CASE("an error while running a node names the node, and the original error is nested") {
  Mixed model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{4, Dim::unknown()})});  // the graph accepts any width
  Tensor wrong = randn({4, 5});
  try {
    Interpreter(model, g).run({wrong});
    FAIL("expected an InterpreterError");
  } catch (const InterpreterError& e) {
    CHECK(e.node() == "fc");
    CHECK(std::string(e.what()).find("While executing %fc : float32[4, 6] [num_users=1] = call_module[target=fc](args = (%x,), kwargs = {})") != std::string::npos);
    CHECK_THROWS_AS(std::rethrow_if_nested(e), OpError);
  }
  CHECK_THROWS_WITH_AS(Interpreter(model, g).run({}), doctest::Contains("the graph takes 1 inputs, got 0"),
                       std::invalid_argument);
}

namespace {

/// Holds a GraphModule as a child, between two ops of its own.
class Wraps : public TypedModule<Wraps> {
 public:
  explicit Wraps(std::shared_ptr<Module> inner) { this->inner = register_module("inner", std::move(inner)); }
  Tensor forward(const Tensor& x) { return inner->call({x * 2.0}).to_tensor().neg(); }
  std::shared_ptr<Module> inner;
};

}  // namespace

TEST_CASE("a GraphModule runs its graph like the module it was traced from, and can be traced again") {
  auto model = std::make_shared<Mixed>();
  Tensor x = randn({3, 6});
  auto gm = std::make_shared<GraphModule>(model, symbolic_trace(*model, {x}));
  CHECK(gm->type_name() == "GraphModule");
  CHECK(gm->input_names() == std::vector<std::string>{"x"});
  CHECK(gm->num_parameters() == model->num_parameters());
  CHECK(gm->state_dict().keys() == model->state_dict().keys());  // non-persistent buffers stay so
  CHECK(gm->named_buffers().size() == 2);
  CHECK(max_rel_error(gm->call({x}).to_tensor(), model->call({x}).to_tensor()) <= 1e-6);

  Wraps outer(gm);
  Graph g = symbolic_trace(outer, {x});
  CHECK_NOTHROW(g.lint());
  CHECK(g.find_node("inner_fc") != nullptr);    // the graph's leaf, under its new path
  CHECK(g.find_node("inner_bias") != nullptr);  // the graph's get_attr, too
  CHECK(max_rel_error(Interpreter(outer, g).run({x}).to_tensor(), outer.call({x}).to_tensor()) <= 1e-6);
}

TEST_CASE("a GraphModule refuses a graph whose targets its root does not have") {
  auto model = std::make_shared<Mixed>();
  Graph g;
  Node& x = g.placeholder("x");
  g.output(g.call_module("missing", {x}));
  CHECK_THROWS_WITH_AS(GraphModule(model, g), doctest::Contains("missing"), std::invalid_argument);
}
