// Transformer (torch.fx's): a graph run symbolically through the Interpreter's hooks becomes
// a new graph that computes what the hooks did.
#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"
#include "support/checks.hpp"
#include "support/cond_modules.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <tuple>

using namespace symtrace;

namespace {

/// relu as a function and as a method, or, with `use_gelu`, the same model written with GELU.
class Activations : public TypedModule<Activations> {
 public:
  Activations() {
    fc1 = register_module("fc1", nn::Linear(8, 16));
    fc2 = register_module("fc2", nn::Linear(16, 4));
    act = register_module("act", nn::ReLU());
  }
  static constexpr int relu_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    Tensor h = use_gelu ? gelu(fc1(x)) : relu(fc1(x));
    h = use_gelu ? gelu(h * 2.0) : (h * 2.0).relu();
    return act(fc2(h));  // a module: stays a call_module node
  }
  bool use_gelu = false;
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::ReLU act{nullptr};
};

class ReluToGelu : public Transformer {
 public:
  using Transformer::Transformer;
  Value call_function(std::string_view target, ValueList args, KeywordValues kwargs) override {
    return Transformer::call_function(target == "relu" ? "gelu" : target, std::move(args), std::move(kwargs));
  }
  Value call_method(std::string_view target, ValueList args, KeywordValues kwargs) override {
    return Transformer::call_method(target == "relu" ? "gelu" : target, std::move(args), std::move(kwargs));
  }
};

int count(const Graph& g, OpKind op, std::string_view target) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op() == op && node.target() == target;
  return n;
}

}  // namespace

TEST_CASE("a Transformer that replaces every relu with gelu runs equal to the model written with GELU") {
  Activations model;
  const Tensor x = randn({3, 8});
  const Graph g = symbolic_trace(model, {x});
  REQUIRE(count(g, OpKind::call_function, "relu") == 1);
  REQUIRE(count(g, OpKind::call_method, "relu") == 1);

  const Graph gelu_graph = ReluToGelu(model, g).transform();
  CHECK_NOTHROW(gelu_graph.lint());
  CHECK(count(gelu_graph, OpKind::call_function, "relu") == 0);
  CHECK(count(gelu_graph, OpKind::call_method, "relu") == 0);
  CHECK(count(gelu_graph, OpKind::call_function, "gelu") == 1);
  CHECK(count(gelu_graph, OpKind::call_method, "gelu") == 1);
  CHECK(count(gelu_graph, OpKind::call_module, "act") == 1);
  CHECK(gelu_graph.size() == g.size());

  const Tensor transformed = Interpreter(model, gelu_graph).run({x}).to_tensor();
  model.use_gelu = true;
  const Tensor eager = model.call({x}).to_tensor();
  CHECK(testing::max_rel_error(transformed, eager) <= 1e-6);
  model.use_gelu = false;
  CHECK(testing::max_rel_error(transformed, model.call({x}).to_tensor()) > 1e-3);  // it did change

  SUBCASE("new nodes keep the file:line, dtype and shape of the nodes they replace") {
    const Node* node = gelu_graph.find_node("gelu");
    REQUIRE(node != nullptr);
    CHECK(node->where().line() == static_cast<unsigned>(Activations::relu_line));
    REQUIRE(node->tensor_meta() != nullptr);
    CHECK(node->tensor_meta()->shape == Shape{3, 16});
  }
}

TEST_CASE("a Transformer without overrides rebuilds the graph it runs") {
  auto model = zoo::create("resnet18");
  model->eval();
  const Tensor x = randn({2, 3, 32, 32});
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim::unknown(), 3, 32, 32})});
  const Graph copy = Transformer(*model, g).transform();
  CHECK_NOTHROW(copy.lint());
  CHECK(copy.size() == g.size());
  for (OpKind op : {OpKind::placeholder, OpKind::get_attr, OpKind::call_function, OpKind::call_method,
                    OpKind::call_module, OpKind::output}) {
    int a = 0, b = 0;
    for (const Node& n : g.nodes()) a += n.op() == op;
    for (const Node& n : copy.nodes()) b += n.op() == op;
    CAPTURE(op);
    CHECK(a == b);
  }
  // The unknown batch stays unknown; module scopes are kept.
  const Node* input = copy.find_node("x");
  REQUIRE(input != nullptr);
  REQUIRE(input->tensor_meta() != nullptr);
  CHECK(!input->tensor_meta()->shape[0].is_known());
  const Node* add = g.find_node("add");
  REQUIRE(add != nullptr);
  REQUIRE(copy.find_node("add") != nullptr);
  CHECK(copy.find_node("add")->scope() == add->scope());
  CHECK(testing::max_rel_error(Interpreter(*model, copy).run({x}).to_tensor(), model->call({x}).to_tensor()) <= 1e-5);
}

TEST_CASE("a Transformer keeps the guards of inputs specialised by concrete_args") {
  class Scaled : public TypedModule<Scaled> {
   public:
    Scaled() { set_input_names({"x", "k"}); }
    Tensor forward(const Tensor& x, std::int64_t k) { return x * static_cast<double>(k); }
  };
  Scaled model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{2, 2})}, {{"k", Value(std::int64_t{3})}});
  const Graph copy = Transformer(model, g).transform();
  CHECK(copy.guards() == g.guards());
  const Tensor x = randn({2, 2});
  CHECK(testing::max_rel_error(Interpreter(model, copy).run({x, Value(std::int64_t{3})}).to_tensor(), x * 3.0) == 0);
}

TEST_CASE("a Transformer re-records a robust trace's graph: failed modules stay leaves with their failure") {
  auto model = zoo::create("mixed_failures");
  model->eval();
  const zoo::ExampleInput& input = zoo::info("mixed_failures").inputs.at(0);
  const Tensor x = randn(input.shape);
  const GraphCollection c = recursive_trace(*model, {InputSpec(x)});
  const Graph* root = c.find("");
  REQUIRE(root != nullptr);
  int failed = 0;
  for (const Node& n : root->nodes()) failed += n.meta(meta_keys::failure) != nullptr;
  REQUIRE(failed > 0);

  const Graph copy = Transformer(*model, *root).transform();
  CHECK_NOTHROW(copy.lint());
  CHECK(copy.size() == root->size());
  for (const Node& n : root->nodes()) {
    if (n.op() != OpKind::call_module) continue;
    CAPTURE(n.name());
    const Node* again = copy.find_node(n.name());
    REQUIRE(again != nullptr);
    CHECK(again->op() == OpKind::call_module);
    CHECK((again->meta(meta_keys::failure) != nullptr) == (n.meta(meta_keys::failure) != nullptr));
    CHECK((again->tensor_meta() != nullptr) == (n.tensor_meta() != nullptr));
    if (n.tensor_meta() != nullptr && again->tensor_meta() != nullptr) CHECK(*again->tensor_meta() == *n.tensor_meta());
  }
  CHECK(testing::max_rel_error(Interpreter(*model, copy).run({x}).to_tensor(), model->call({x}).to_tensor()) <= 1e-5);
}

TEST_CASE("a Transformer re-records cond, and a graph whose output is a parameter") {
  SUBCASE("cond") {
    testing::Gated model;
    const Graph g = symbolic_trace(model, {InputSpec(Shape{3})});
    const Graph copy = Transformer(model, g).transform();
    CHECK_NOTHROW(copy.lint());
    CHECK(count(copy, OpKind::call_function, cond_target) == 1);
    CHECK(copy.subgraphs().size() == 2);
    for (float sign : {1.0f, -1.0f}) {
      const Tensor x = tensor({sign * 1.0f, sign * 2.0f, sign * 3.0f});
      CHECK(testing::max_rel_error(Interpreter(model, copy).run({x}).to_tensor(), model(x)) <= 1e-6);
    }
  }
  SUBCASE("a parameter as an output") {
    class WithWeight : public TypedModule<WithWeight> {
     public:
      WithWeight() { weight = register_parameter("weight", ones({2})); }
      std::tuple<Tensor, Tensor> forward(const Tensor& x) { return {x + 1.0, weight}; }
      Tensor weight;
    };
    WithWeight model;
    const Graph g = symbolic_trace(model, {InputSpec(Shape{2})});
    const Graph copy = Transformer(model, g).transform();
    CHECK_NOTHROW(copy.lint());
    CHECK(to_string(copy) == to_string(g));
  }
}

TEST_CASE("a Transformer refuses a placeholder it cannot make an input for") {
  Activations model;
  Graph g;
  Node& x = g.placeholder("x");
  g.output(Argument(x.id()));
  CHECK_THROWS_WITH_AS((void)Transformer(model, g).transform(),
                       doctest::Contains("placeholder %x has no dtype or shape, so the Transformer cannot make its input"),
                       std::invalid_argument);
}
