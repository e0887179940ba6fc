// Parameters, MACs, FLOPs and activation memory per node and per module, and the summary table.
#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

/// conv (3 -> 4, 3x3, bias) -> batch norm -> relu -> mean over H, W -> linear (4 -> 2).
class TinyNet : public TypedModule<TinyNet> {
 public:
  TinyNet() {
    conv = register_module("conv", nn::Conv2d(3, 4, 3, {.padding = 1}));
    bn = register_module("bn", nn::BatchNorm2d(4));
    fc = register_module("fc", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x) { return fc(relu(bn(conv(x))).mean({2, 3})); }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Linear fc{nullptr};
};

/// Reads tensor data: cannot be traced; keeps its input's shape.
class DataGate : public TypedModule<DataGate> {
 public:
  DataGate() { conv = register_module("conv", nn::Conv2d(4, 4, 1)); }
  Tensor forward(const Tensor& x) { return x.sum().item<float>() > 0 ? conv(x) : x; }
  nn::Conv2d conv{nullptr};
};

class GatedNet : public TypedModule<GatedNet> {
 public:
  GatedNet() {
    conv = register_module("conv", nn::Conv2d(3, 4, 3, {.padding = 1}));
    gate = register_module("gate", std::make_shared<DataGate>());
    fc = register_module("fc", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x) { return fc(gate->call({conv(x)}).to_tensor().mean({2, 3})); }
  nn::Conv2d conv{nullptr};
  std::shared_ptr<DataGate> gate;
  nn::Linear fc{nullptr};
};

std::vector<InputSpec> zoo_inputs(const zoo::ModelInfo& info) {
  std::vector<InputSpec> specs;
  for (const zoo::ExampleInput& in : info.inputs) specs.emplace_back(Shape(in.shape), in.dtype);
  return specs;
}

const ModuleSummary& row(const ModelSummary& s, std::string_view path) {
  for (const ModuleSummary& m : s.modules) {
    if (m.path == path) return m;
  }
  FAIL("no row for '" << std::string(path) << "'");
  return s.modules.front();
}

}  // namespace

TEST_CASE("each node is charged by the counting convention: one multiply-add is one MAC and two FLOPs") {
  TinyNet net;
  net.eval();
  const GraphCollection c = trace_for_analysis(net, {Shape{1, 3, 8, 8}});
  const Graph& g = *c.find(net);
  std::vector<std::string> costs;
  for (const Node& n : g.nodes()) {
    const NodeCost cost = node_cost(n);
    REQUIRE(cost.known);
    if (n.op() == OpKind::call_function || n.op() == OpKind::call_method) {
      costs.push_back(fmt::format("{} {} {} {}", n.target(), cost.macs, cost.flops, cost.output_bytes));
    }
  }
  // conv2d: 256 outputs x (3 x 3 x 3) MACs, 2 FLOPs per MAC and one per output for the bias;
  // batch_norm: 2 FLOPs per element; relu: 1; mean: one per input element; linear: 2 x 4 MACs.
  CHECK(costs == std::vector<std::string>{"conv2d 6912 14080 1024", "batch_norm 0 512 1024", "relu 0 256 1024",
                                          "mean 0 256 16", "linear 8 18 8"});
  const GraphCost total = graph_cost(g);
  CHECK(total.macs == 6920);
  CHECK(total.flops == 15122);
  CHECK(total.activation_bytes == 3096);
  CHECK(total.unknown_nodes == 0);
}

TEST_CASE("views and in-place ops allocate nothing; a matmul is charged its contracted size") {
  Graph g;
  Node& a = g.placeholder("a");
  a.set_tensor_meta(TensorMeta{DType::float32, Shape{2, 3, 5}});
  Node& b = g.placeholder("b");
  b.set_tensor_meta(TensorMeta{DType::float32, Shape{2, 5, 7}});
  Node& mm = g.create_node(OpKind::call_function, "matmul", {a, b});
  mm.set_tensor_meta(TensorMeta{DType::float32, Shape{2, 3, 7}});
  Node& view = g.create_node(OpKind::call_method, "transpose", {mm, 1, 2});
  view.set_tensor_meta(TensorMeta{DType::float32, Shape{2, 7, 3}});
  Node& inplace = g.create_node(OpKind::call_method, "relu_", {view});
  inplace.set_tensor_meta(TensorMeta{DType::float32, Shape{2, 7, 3}});
  Node& unknown = g.create_node(OpKind::call_function, "add", {a, 1});
  unknown.set_tensor_meta(TensorMeta{DType::float32, Shape::unknown_rank()});
  g.output(Argument(inplace));
  CHECK(node_cost(mm).macs == 2 * 3 * 7 * 5);
  CHECK(node_cost(mm).flops == 2 * 2 * 3 * 7 * 5);
  CHECK(node_cost(mm).output_bytes == 2 * 3 * 7 * 4);
  CHECK(node_cost(view).output_bytes == 0);
  CHECK(node_cost(inplace).output_bytes == 0);
  CHECK(node_cost(inplace).flops == 42);
  CHECK_FALSE(node_cost(unknown).known);
  CHECK(graph_cost(g).unknown_nodes == 1);
}

TEST_CASE("the summary of a small model is torchinfo's table, with totals") {
  TinyNet net;
  net.eval();
  const ModelSummary s = summarize(net, trace_for_analysis(net, {Shape{1, 3, 8, 8}}), "tiny");
  CHECK(to_string(s) == R"(Module (type)       Output        Parameters   MACs
tiny (TinyNet)      [1, 2]               130  6,920
  conv (Conv2d)     [1, 4, 8, 8]         112  6,912
  bn (BatchNorm2d)  [1, 4, 8, 8]           8      0
  fc (Linear)       [1, 2]                10      8
Parameters: 130
MACs: 6,920 (0.00 G)
FLOPs: 15,122 (0.00 G)
Activation memory: 3.0 KiB
)");
}

TEST_CASE("the summary as JSON holds every module with its output, parameters and cost") {
  TinyNet net;
  net.eval();
  const ModelSummary s = summarize(net, trace_for_analysis(net, {Shape{1, 3, 8, 8}}), "tiny");
  const auto doc = nlohmann::json::parse(to_string(s, ReportFormat::json));
  CHECK(doc["model"] == "tiny");
  CHECK(doc["parameters"] == 130);
  CHECK(doc["macs"] == 6920);
  CHECK(doc["flops"] == 15122);
  CHECK(doc["activation_bytes"] == 3096);
  CHECK(doc["complete"] == true);
  CHECK(doc["unknown"].empty());
  REQUIRE(doc["modules"].size() == 4);
  CHECK(doc["modules"][1] == nlohmann::json::parse(R"({"module": "conv", "type": "Conv2d", "status": "traced",
      "output": [[1, 4, 8, 8]], "parameters": 112, "macs": 6912, "flops": 14080, "complete": true})"));
}

TEST_CASE("a failed module's cost is unknown, not guessed, and the totals around it are lower bounds") {
  GatedNet net;
  net.eval();
  const GraphCollection c = trace_for_analysis(net, {Shape{1, 3, 8, 8}});
  REQUIRE(c.failures().size() == 1);
  const ModelSummary s = summarize(net, c, "gated");
  const ModuleSummary& gate = row(s, "gate");
  CHECK(gate.status == ModuleStatus::failed);
  CHECK_FALSE(gate.macs.has_value());
  CHECK(gate.parameters == 4 * 4 + 4);  // its own parameters still count
  CHECK_FALSE(row(s, "gate.conv").macs.has_value());
  // Its output shape came from running it, so the layers after it are still counted.
  CHECK(to_string(gate.output.at(0).shape) == "[1, 4, 8, 8]");
  CHECK(row(s, "fc").macs == 8);
  CHECK(row(s, "conv").macs == 6912);
  CHECK_FALSE(s.complete);
  CHECK(s.macs == 6912 + 8);
  CHECK(s.unknown == std::vector<std::string>{"gate"});
  // gate.conv is traced on its own (its parent failed before calling it): its shapes are unknown.
  CHECK(to_string(s) == R"(Module (type)      Output        Parameters     MACs
gated (GatedNet)   [1, 2]               142  ≥ 6,920
  conv (Conv2d)    [1, 4, 8, 8]         112    6,912
  gate (DataGate)  [1, 4, 8, 8]          20        ?  failed
    conv (Conv2d)  [...]                 20        ?
  fc (Linear)      [1, 2]                10        8
Parameters: 142
MACs: ≥ 6,920 (≥ 0.00 G)
FLOPs: ≥ 14,354 (≥ 0.00 G)
Activation memory: ≥ 1.0 KiB
Unknown cost (not guessed): gate (DataGate, failed)
)");
  const auto doc = nlohmann::json::parse(to_string(s, ReportFormat::json));
  CHECK(doc["modules"][2]["macs"].is_null());
  CHECK(doc["complete"] == false);
}

TEST_CASE("MACs and parameters of resnet50, mobilenet_v2 and vit_b16 at 224x224 are the published ones within 3%") {
  // The published figures count one multiply-add as one MAC (torchvision's "GFLOPS").
  struct Expected {
    const char* model;
    double gmacs;
    std::int64_t parameters;
  };
  for (const Expected& e : {Expected{"resnet50", 4.1, 25'557'032}, Expected{"mobilenet_v2", 0.30, 3'504'872},
                            Expected{"vit_b16", 17.6, 86'567'656}}) {
    CAPTURE(e.model);
    const zoo::ModelInfo& info = zoo::info(e.model);
    const std::shared_ptr<Module> model = info.create();
    const ModelSummary s = summarize(*model, trace_for_analysis(*model, zoo_inputs(info)), e.model);
    CHECK(s.complete);
    CHECK(s.parameters == e.parameters);
    CHECK(std::abs(static_cast<double>(*s.macs.constant_value()) / 1e9 - e.gmacs) <= 0.03 * e.gmacs);
  }
}

TEST_CASE("per-module rows add up: a block's MACs are its layers', and the model's the sum of its children's") {
  const zoo::ModelInfo& info = zoo::info("resnet18");
  const std::shared_ptr<Module> model = info.create();
  const ModelSummary s = summarize(*model, trace_for_analysis(*model, zoo_inputs(info)), "resnet18");
  CHECK(row(s, "layer1.0.conv1").macs == 64 * 64 * 3 * 3 * 56 * 56);
  CHECK(row(s, "layer1.0").macs == *row(s, "layer1.0.conv1").macs + *row(s, "layer1.0.conv2").macs);
  CHECK(to_string(row(s, "layer2").output.at(0).shape) == "[1, 128, 28, 28]");
  CHECK(to_string(row(s, "fc").output.at(0).shape) == "[1, 1000]");
  SymExpr children = 0;
  for (const ModuleSummary& m : s.modules) {
    if (m.depth == 1) children = children + *m.macs;
  }
  CHECK(children == s.macs);
  CHECK(row(s, "").parameters == 11'689'512);
}

TEST_CASE("on resnet50 with a failing block, the block counts with its layers' graphs, as a lower bound") {
  const std::shared_ptr<Module> clean = zoo::create("resnet50");
  const std::shared_ptr<Module> failing = zoo::create("resnet50_fail1");
  const std::vector<InputSpec> inputs{Shape{1, 3, 224, 224}};
  const ModelSummary a = summarize(*clean, trace_for_analysis(*clean, inputs), "resnet50");
  const ModelSummary b = summarize(*failing, trace_for_analysis(*failing, inputs), "resnet50_fail1");
  CHECK(b.unknown == std::vector<std::string>{"layer3.0"});
  CHECK(b.parameters == a.parameters);
  // The block's layers were called before it failed, so the collection traced each as a root
  // on the shapes of its call: all of the block's MACs are in its convolutions, so the lower
  // bound is the clean count. The FLOPs of the block's own code (its residual add) and of its
  // ReLU's second and third calls are not counted.
  CHECK_FALSE(b.complete);
  CHECK(b.macs == a.macs);
  CHECK(row(b, "layer3.0").macs == row(a, "layer3.0").macs);
  CHECK(row(b, "layer3.0.conv2").macs == row(a, "layer3.0.conv2").macs);
  CHECK_FALSE(row(b, "layer3.0").complete);
  CHECK_FALSE(row(b, "layer3").complete);
  CHECK(row(b, "layer2").complete);
  CHECK(*b.flops.constant_value() < *a.flops.constant_value());
  CHECK(*row(b, "layer3.0").flops->constant_value() < *row(a, "layer3.0").flops->constant_value());
  CHECK(b.flops - *row(b, "layer3.0").flops == a.flops - *row(a, "layer3.0").flops);
}

TEST_CASE("a failed root counts with the graphs of its children: every total is a lower bound") {
  const std::shared_ptr<Module> failing = zoo::create("resnet50_fail1");
  const std::shared_ptr<Module> clean = zoo::create("resnet50");
  const std::vector<InputSpec> inputs{Shape{1, 3, 224, 224}};
  const ModelSummary a = summarize(*clean, trace_for_analysis(*clean, inputs), "resnet50");
  // The failing block as the model: the root fails, and its layers are traced as roots
  // (ModelOpt's semantics), on the shapes of their calls before the failure.
  Module& block = failing->get_submodule("layer3.0");
  const GraphCollection c = trace_for_analysis(block, {Shape{1, 512, 28, 28}});
  REQUIRE(c.is_failed(block));
  const ModelSummary s = summarize(block, c, "block");
  CHECK_FALSE(s.complete);
  CHECK(s.macs == *row(a, "layer3.0").macs);
  CHECK(row(s, "").macs == *row(a, "layer3.0").macs);
  CHECK_FALSE(row(s, "").complete);
  CHECK(to_string(s).find("MACs: ≥ 0") == std::string::npos);
}

TEST_CASE("summarize refuses a collection made from another model") {
  TinyNet a;
  TinyNet b;
  const GraphCollection c = trace_for_analysis(a, {Shape{1, 3, 8, 8}});
  CHECK_THROWS_WITH_AS((void)summarize(b, c, "b"),
                       doctest::Contains("summarize(): the collection was not made from this model (TinyNet)"),
                       std::invalid_argument);
}

TEST_CASE("tracing through the built-in layers fails exactly where recursive_trace does, on every zoo model") {
  for (const std::string& name : zoo::names()) {
    if (name == "vit_b16" || name == "deep_mlp_10000") continue;  // as vit_tiny and deep_mlp_1000, larger
    CAPTURE(name);
    const zoo::ModelInfo& info = zoo::info(name);
    const std::shared_ptr<Module> model = info.create();
    const GraphCollection plain = recursive_trace(*model, zoo_inputs(info));
    const GraphCollection analysed = trace_for_analysis(*model, zoo_inputs(info));
    std::vector<std::string> expected;
    std::vector<std::string> failed;
    for (const ModuleFailure& f : plain.failures()) expected.push_back(f.module);
    for (const ModuleFailure& f : analysed.failures()) failed.push_back(f.module);
    CHECK(failed == expected);
    for (const GraphCollection::Entry& e : analysed) e.graph.lint();
    const ModelSummary s = summarize(*model, analysed, name);
    CHECK(s.parameters == info.parameters);
    CHECK(s.complete == expected.empty());
    // deep_chain_1000's only multiply-accumulates are in its failing innermost module.
    if (name != "deep_chain_1000") CHECK(*s.macs.constant_value() > 0);
  }
}

TEST_CASE("a registered leaf keeps its parameters in the summary, and its cost is unknown") {
  GatedNet net;
  net.eval();
  GraphCollection c(std::make_unique<AnalysisTracer>());
  // Its shape function: the output is shaped as the input.
  c.tracer().register_leaf<DataGate>([](const Module&, const ValueList& args) {
    const TensorMeta& in = args.at(0).to_tensor().meta();
    return OutputMeta::single(in.dtype, in.shape);
  });
  c.recursive_trace(net, {Shape{1, 3, 8, 8}});
  for (const ModuleFailure& f : c.failures()) MESSAGE(to_string(f));
  REQUIRE(c.failures().empty());
  const ModelSummary s = summarize(net, c, "gated");
  CHECK(row(s, "gate").status == ModuleStatus::leaf);
  CHECK(row(s, "gate").parameters == 20);
  CHECK_FALSE(row(s, "gate").macs.has_value());
  CHECK(s.unknown == std::vector<std::string>{"gate"});
  CHECK(s.macs == 6912 + 8);
  CHECK_FALSE(s.complete);
  CHECK(row(s, "conv").complete);
}
