// The robust tracer's fallback by execution: failed modules whose input shapes are known are
// captured by running them on synthetic inputs, kept as specialised subgraphs with their
// warnings, and shown in the coverage report; the rest say why they were not.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/failures.hpp"
#include "symtrace/zoo/resnet.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

using namespace symtrace;
using testing::max_rel_error;

namespace {

/// Fails symbolically and eagerly alike (an opaque library call that refuses).
class AlwaysThrows : public TypedModule<AlwaysThrows> {
 public:
  Tensor forward(const Tensor&) { throw std::runtime_error("library refused"); }
};

/// Branches on data and holds a BatchNorm, whose running statistics a training run updates.
class NormThenGate : public TypedModule<NormThenGate> {
 public:
  static constexpr int branch_line = __LINE__ + 4;
  NormThenGate() { bn = register_module("bn", nn::BatchNorm2d(3)); }
  Tensor forward(const Tensor& x) {
    Tensor h = bn(x);
    if (h.amax().gt(100.0).to_bool()) return h * 0;
    return h + 1;
  }
  nn::BatchNorm2d bn{nullptr};
};

class Holder : public TypedModule<Holder> {
 public:
  Holder() {
    gate = register_module("gate", std::make_shared<NormThenGate>());
    opaque = register_module("opaque", std::make_shared<AlwaysThrows>());
  }
  Tensor forward(const Tensor& x) { return opaque->call({gate->call({x})}).to_tensor(); }
  std::shared_ptr<Module> gate;
  std::shared_ptr<Module> opaque;
};

GraphCollection capturing_collection() {
  GraphCollection c;
  c.capture_failed_by_execution();
  return c;
}

}  // namespace

TEST_CASE("without the option nothing is captured by execution") {
  const std::shared_ptr<Module> model = zoo::create("resnet50_fail1");
  const GraphCollection c = recursive_trace(*model, {InputSpec(Shape{1, 3, 64, 64})});
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].by_execution == nullptr);
  CHECK(c.begin()->graph.subgraphs().empty());
  const auto report = nlohmann::json::parse(coverage_report(c, "resnet50_fail1", ReportFormat::json));
  CHECK(report["failed"][0]["by_execution"].is_null());
}

TEST_CASE("a failed bottleneck is captured by execution on inputs of its call's shape, branch warned at its line") {
  const std::shared_ptr<Module> model = zoo::create("resnet50_fail1");
  GraphCollection c = capturing_collection();
  c.recursive_trace(*model, {InputSpec(Shape{1, 3, 64, 64})});
  REQUIRE(c.failures().size() == 1);
  const ModuleFailure& f = c.failures()[0];
  CHECK(f.module == "layer3.0");
  REQUIRE(f.by_execution != nullptr);
  const ExecutionCapture& x = *f.by_execution;
  CHECK(x.error.empty());
  REQUIRE(x.inputs.size() == 1);
  CHECK(x.inputs[0].shape == Shape{1, 512, 8, 8});
  REQUIRE(x.warnings.size() == 1);
  CHECK(x.warnings[0].kind == TraceWarning::Kind::branch);
  CHECK(x.warnings[0].where.line() == static_cast<unsigned>(zoo::FailingBottleneckImpl::data_branch_line));
  CHECK(x.warnings[0].module_path == "");  // the failed module is the capture's root
  REQUIRE(x.graph != nullptr);
  CHECK_NOTHROW(x.graph->lint());

  // The capture computes what the module computes on its synthetic inputs.
  Module& block = *model->find_child("layer3")->find_child("0");
  Generator gen(0);
  const Tensor input = randn({1, 512, 8, 8}, gen);
  const Tensor eager = block.call({input}).to_tensor();
  CHECK(max_rel_error(Interpreter(block, *x.graph).run({input}).to_tensor(), eager) <= 1e-6);

  // In the model's graph the leaf names its specialised subgraph.
  const Graph& root = c.begin()->graph;
  REQUIRE(root.subgraphs().size() == 1);
  CHECK(root.subgraphs()[0].first == "by_execution_0");
  CHECK(root.subgraphs()[0].second->size() == x.graph->size());
  const Node* leaf = root.find_node("layer3_0");
  REQUIRE(leaf != nullptr);
  REQUIRE(leaf->meta("by_execution") != nullptr);
  CHECK(*leaf->meta("by_execution") == Argument(std::string("by_execution_0")));
  CHECK(*leaf->meta("specialised") == Argument(true));
  CHECK_NOTHROW(root.lint());

  const std::string text = coverage_report(c, "resnet50_fail1");
  CHECK(text.find(fmt::format("    captured by execution on float32[1, 512, 8, 8]: {} nodes, specialised (1 place "
                              "reads tensor data)\n      src/zoo/resnet.cpp:{} branch (1 time)\n",
                              x.graph->size(), zoo::FailingBottleneckImpl::data_branch_line)) != std::string::npos);
  const auto report = nlohmann::json::parse(coverage_report(c, "resnet50_fail1", ReportFormat::json));
  const auto& by_execution = report["failed"][0]["by_execution"];
  CHECK(by_execution["nodes"] == x.graph->size());
  CHECK(by_execution["inputs"][0]["shape"] == "[1, 512, 8, 8]");
  CHECK(by_execution["warnings"][0]["kind"] == "branch");
  CHECK(by_execution["warnings"][0]["source"] ==
        fmt::format("src/zoo/resnet.cpp:{}", zoo::FailingBottleneckImpl::data_branch_line));
  CHECK(by_execution["error"].is_null());
}

TEST_CASE("modules that cannot be captured by execution say why, and a capture leaves the module's state alone") {
  Holder model;
  model.train();  // the BatchNorm's training run would update its statistics
  std::vector<std::vector<double>> before;
  const StateDict initial = model.state_dict();  // handles to the live tensors: copy their values
  for (const auto& [key, value] : initial.entries()) before.push_back(value.to_vector<double>());
  GraphCollection c = capturing_collection();
  c.recursive_trace(model, {InputSpec(Shape{2, 3, 4, 4})});
  REQUIRE(c.failures().size() == 2);

  const ModuleFailure& gate = *c.failure(*model.gate);
  REQUIRE(gate.by_execution != nullptr);
  REQUIRE(gate.by_execution->graph != nullptr);
  REQUIRE(gate.by_execution->warnings.size() == 1);
  CHECK(gate.by_execution->warnings[0].where.line() == static_cast<unsigned>(NormThenGate::branch_line));
  // The gate failed, and was run for its result: the next module's input shape is known, and
  // its run throws.
  CHECK(gate.result_by_execution);
  const ModuleFailure& opaque = *c.failure(*model.opaque);
  REQUIRE(opaque.by_execution != nullptr);
  CHECK(opaque.by_execution->graph == nullptr);
  CHECK(opaque.by_execution->error == "running it failed: std::runtime_error: library refused");
  CHECK_FALSE(opaque.result_by_execution);  // its runs throw too: its result stays unknown
  const std::string text = coverage_report(c, "holder");
  CHECK(text.find("    not captured by execution: running it failed: std::runtime_error: library refused\n") !=
        std::string::npos);

  // Without the gate's result by execution, the opaque module's input shape is unknown: it
  // cannot be run.
  GraphCollection unknown = capturing_collection();
  unknown.tracer().set_result_by_execution(false);
  unknown.recursive_trace(model, {InputSpec(Shape{2, 3, 4, 4})});
  REQUIRE(unknown.failure(*model.opaque) != nullptr);
  REQUIRE(unknown.failure(*model.opaque)->by_execution != nullptr);
  CHECK(unknown.failure(*model.opaque)->by_execution->error == "the shapes of its inputs at its call are not all known");
  CHECK(coverage_report(unknown, "holder").find("    not captured by execution: the shapes of its inputs at its call are "
                                                "not all known\n") != std::string::npos);

  // Traced as a root with a known shape, the opaque module's run throws: said so.
  GraphCollection alone = capturing_collection();
  alone.recursive_trace(*model.opaque, {InputSpec(Shape{2, 3})});
  REQUIRE(alone.failure(*model.opaque) != nullptr);
  REQUIRE(alone.failure(*model.opaque)->by_execution != nullptr);
  CHECK(alone.failure(*model.opaque)->by_execution->error == "running it failed: std::runtime_error: library refused");

  // Running the gate on synthetic inputs in training mode left its statistics as they were.
  const StateDict after = model.state_dict();
  REQUIRE(after.size() == before.size());
  CHECK(after.at("gate.bn.num_batches_tracked").to_vector<double>() == std::vector<double>{0});
  for (std::size_t i = 0; i < after.size(); ++i) {
    CAPTURE(after.entries()[i].first);
    CHECK(after.entries()[i].second.to_vector<double>() == before[i]);
  }
}
