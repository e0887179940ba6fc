// Zoo models traced with named dims (docs/design.md, decision 13): every node's shape is an
// expression over N, H, W (or D) that, for sizes within the ranges, equals the shape the node's value has
// when the graph runs on inputs of those sizes; no anonymous dim remains; and the guards the
// trace records are exactly what each architecture needs.

#include "support/zoo_checks.hpp"

#include <symtrace/analysis/analysis_trace.hpp>
#include <symtrace/analysis/model_summary.hpp>
#include <symtrace/graph/dim_bindings.hpp>

#include <string>
#include <vector>

using namespace symtrace;

namespace {

/// An interpreter that keeps the shape of every tensor a node computes.
struct ShapeRecorder : Interpreter {
  using Interpreter::Interpreter;
  std::vector<std::pair<const Node*, Shape>> seen;
  Value run_node(const Node& node) override {
    Value v = Interpreter::run_node(node);
    const Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
    if (node.op() != OpKind::output && t != nullptr && t->defined())
      seen.emplace_back(&node, t->shape());
    return v;
  }
};

/// The size guards of `g`, as text.
std::vector<std::string> size_guards(const Graph& g) {
  std::vector<std::string> out;
  for (const Graph::SizeGuard& guard : g.size_guards()) out.push_back(to_string(guard.fact));
  return out;
}

/// Checks that graph JSON gives back `g` exactly: its text, its size guards, its document.
void check_json_round_trip(const Graph& g) {
  const std::string json = graph_to_json(g);
  const Graph back = graph_from_json(json);
  CHECK(to_string(back) == to_string(g));
  REQUIRE(back.size_guards().size() == g.size_guards().size());
  for (std::size_t i = 0; i < g.size_guards().size(); ++i) {
    CHECK(back.size_guards()[i].fact == g.size_guards()[i].fact);
    CHECK(back.size_guards()[i].where.line() == g.size_guards()[i].where.line());
  }
  CHECK(graph_to_json(back) == json);
}

/// Checks that no node of `g` has an anonymous dim or an unknown rank.
void check_fully_described(const Graph& g) {
  for (const Node& node : g.nodes()) {
    const TensorMeta* meta = node.tensor_meta();
    if (meta == nullptr) continue;
    INFO(node.name(), " : ", to_string(meta->shape));
    CHECK(meta->shape.is_fully_described());
  }
}

/// Runs `g` on random inputs of `sizes` and checks each node's traced shape, evaluated for the
/// dims bound from those inputs, against the shape its value has.
void check_shapes_at(Module& model, const Graph& g, const std::vector<IntList>& sizes) {
  ValueList inputs;
  std::vector<std::optional<Shape>> shapes;
  for (const IntList& s : sizes) {
    inputs.emplace_back(randn(s));
    shapes.emplace_back(Shape(s));
  }
  const SymBindings bindings = bind_input_dims(g, shapes);
  ShapeRecorder recorder(model, g);
  recorder.run(inputs);
  REQUIRE(!recorder.seen.empty());
  for (const auto& [node, shape] : recorder.seen) {
    const TensorMeta* meta = node->tensor_meta();
    REQUIRE(meta != nullptr);
    INFO(node->name(), " traced as ", to_string(meta->shape), ", ran as ", to_string(shape));
    REQUIRE(meta->shape.rank() == shape.rank());
    for (std::size_t d = 0; d < shape.rank(); ++d) {
      const std::optional<SymExpr> e = meta->shape[d].expr();
      REQUIRE(e.has_value());
      CHECK(e->evaluate(bindings) == shape[d].raw());
    }
  }
}

/// Checks that the costs `analyze` gives at named dims, evaluated for the sizes `sizes` bind,
/// are exactly the costs it gives with those sizes known, model and modules alike.
void check_costs_at(Module& model, const std::vector<InputSpec>& specs, const std::vector<IntList>& sizes) {
  const GraphCollection named = trace_for_analysis(model, specs);
  const ModelSummary formulas = summarize(model, named, "model");
  CHECK(formulas.complete);
  std::vector<std::optional<Shape>> shapes;
  std::vector<InputSpec> known;
  for (const IntList& s : sizes) {
    shapes.emplace_back(Shape(s));
    known.emplace_back(Shape(s));
  }
  const SymBindings b = bind_input_dims(named.begin()->graph, shapes);
  const ModelSummary at = evaluate(formulas, b);
  const ModelSummary expected = summarize(model, trace_for_analysis(model, known), "model");
  CHECK(at.macs == expected.macs);
  CHECK(at.flops == expected.flops);
  CHECK(at.activation_bytes == expected.activation_bytes);
  REQUIRE(at.modules.size() == expected.modules.size());
  for (std::size_t i = 0; i < at.modules.size(); ++i) {
    INFO(at.modules[i].path);
    CHECK(at.modules[i].macs == expected.modules[i].macs);
    CHECK(at.modules[i].flops == expected.modules[i].flops);
    CHECK(at.modules[i].output == expected.modules[i].output);
  }
}

}  // namespace

TEST_CASE("resnet50 traced at Nx3xHxW: every shape is a formula of N, H and W that its runs confirm") {
  std::shared_ptr<Module> model = zoo::create("resnet50");
  model->eval();
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N", 1, 64), 3, Dim("H", 32, 1024), Dim("W", 32, 1024)})});
  g.lint();
  check_fully_described(g);
  check_json_round_trip(g);
  CHECK(size_guards(g).empty());  // convolutions and pooling need nothing the ranges do not prove
  CHECK(testing::result_meta(g) == "float32[N, 1000]");
  for (const IntList& s : std::vector<IntList>{{1, 3, 32, 32}, {2, 3, 33, 47}, {1, 3, 64, 40}, {3, 3, 35, 32}, {1, 3, 97, 61}}) {
    check_shapes_at(*model, g, {s});
    check_costs_at(*model, {InputSpec(Shape{Dim("N", 1, 64), 3, Dim("H", 32, 1024), Dim("W", 32, 1024)})}, {s});
  }
}

TEST_CASE("resnet50's MACs at Nx3x224x224 are 4,089,184,256 per image") {
  std::shared_ptr<Module> model = zoo::create("resnet50");
  const ModelSummary s = summarize(*model, trace_for_analysis(*model, {InputSpec(Shape{Dim("N"), 3, 224, 224})}), "resnet50");
  CHECK(s.complete);
  CHECK(s.macs == SymExpr(4'089'184'256) * SymExpr::symbol("N"));
  CHECK(to_string(s).find("MACs: 4,089,184,256·N\n") != std::string::npos);
}

TEST_CASE("mobilenet_v2 traced at Nx3xHxW: every shape is a formula of N, H and W that its runs confirm") {
  std::shared_ptr<Module> model = zoo::create("mobilenet_v2");
  model->eval();
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N", 1, 64), 3, Dim("H", 32, 1024), Dim("W", 32, 1024)})});
  g.lint();
  check_fully_described(g);
  check_json_round_trip(g);
  CHECK(size_guards(g).empty());
  for (const IntList& s : std::vector<IntList>{{1, 3, 32, 32}, {2, 3, 45, 33}, {1, 3, 64, 71}, {2, 3, 32, 50}, {1, 3, 81, 39}}) {
    check_shapes_at(*model, g, {s});
    check_costs_at(*model, {InputSpec(Shape{Dim("N", 1, 64), 3, Dim("H", 32, 1024), Dim("W", 32, 1024)})}, {s});
  }
}

TEST_CASE("unet_small traced at Nx3xHxW: its skip connections need each pooling to divide evenly, and say so") {
  std::shared_ptr<Module> model = zoo::create("unet_small");
  model->eval();
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N", 1, 64), 3, Dim("H", 8, 1024), Dim("W", 8, 1024)})});
  g.lint();
  check_fully_described(g);
  check_json_round_trip(g);
  // Each decoder stage upsamples by 2 and concatenates with the encoder's map of that size: the
  // sizes agree only when each pooling divided evenly, and the guards say exactly that.
  CHECK(size_guards(g) == std::vector<std::string>{"(H//4) % 2 == 0", "(W//4) % 2 == 0", "(H//2) % 2 == 0",
                                                   "(W//2) % 2 == 0", "H % 2 == 0", "W % 2 == 0"});
  for (const Graph::SizeGuard& guard : g.size_guards()) {
    CHECK(std::string_view(guard.where.file_name()).ends_with("src/zoo/unet.cpp"));  // the cat of Up::forward
  }
  // H = 12 pools to 6 and 3, and 3 upsampled is 6 again but not 3's origin: the interpreter
  // refuses it, naming the guard.
  CHECK_THROWS_WITH_AS(Interpreter(*model, g).run({randn({1, 3, 12, 16})}),
                       doctest::Contains("(H = 12) break the guard (H//4) % 2 == 0 that "), std::invalid_argument);
  for (const IntList& s : std::vector<IntList>{{1, 3, 8, 8}, {2, 3, 16, 24}, {1, 3, 40, 32}, {1, 3, 64, 64}, {3, 3, 24, 56}}) {
    check_shapes_at(*model, g, {s});
    check_costs_at(*model, {InputSpec(Shape{Dim("N", 1, 64), 3, Dim("H", 8, 1024), Dim("W", 8, 1024)})}, {s});
  }
}

TEST_CASE("deep_mlp_1000 traced at NxD: the first layer needs D == 64, and every shape is [N, 64]") {
  std::shared_ptr<Module> model = zoo::create("deep_mlp_1000");
  model->eval();
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N"), Dim("D")})});
  g.lint();
  check_fully_described(g);
  check_json_round_trip(g);
  CHECK(size_guards(g) == std::vector<std::string>{"D == 64"});
  for (const IntList& s : std::vector<IntList>{{1, 64}, {2, 64}, {7, 64}, {16, 64}, {33, 64}}) {
    check_shapes_at(*model, g, {s});
    check_costs_at(*model, {InputSpec(Shape{Dim("N"), Dim("D")})}, {s});
  }
}

TEST_CASE("vit_b16 traced at Nx3x224x224: every shape is a formula of N that its runs confirm") {
  std::shared_ptr<Module> model = zoo::create("vit_b16");
  model->eval();
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N", 1, 64), 3, 224, 224})});
  g.lint();
  check_fully_described(g);
  check_json_round_trip(g);
  CHECK(size_guards(g).empty());
  CHECK(testing::result_meta(g) == "float32[N, 1000]");
  for (std::int64_t n : {1, 2, 3, 4, 5}) {
    check_shapes_at(*model, g, {{n, 3, 224, 224}});
    check_costs_at(*model, {InputSpec(Shape{Dim("N", 1, 64), 3, 224, 224})}, {{n, 3, 224, 224}});
  }
}
