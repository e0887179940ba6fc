// TraceRecords: what robust traces found, owned by the collection and lent to its tracer;
// failures recorded once with their paths; every graph recorded through the tracer's hooks.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>

using namespace symtrace;

namespace {

/// Reads its input's data (a symbolic trace fails here); holds a ModuleList and a Linear, which
/// the collection then traces as roots: the list cannot be called as a whole, the Linear is a leaf.
class Gate : public TypedModule<Gate> {
 public:
  Gate() {
    blocks = register_module("blocks", std::make_shared<nn::ModuleListImpl>());
    blocks->push_back(nn::Linear(4, 4));
    fc = register_module("fc", nn::Linear(4, 4));
  }
  Tensor forward(const Tensor& x) {
    const Tensor h = fc(x);
    return h.sum().item<float>() > 0 ? (*blocks)[0].call({h}).to_tensor() : h;
  }
  std::shared_ptr<nn::ModuleListImpl> blocks;
  nn::Linear fc{nullptr};
};

class Net : public TypedModule<Net> {
 public:
  Net() {
    stem = register_module("stem", nn::Linear(4, 4));
    gate = register_module("gate", std::make_shared<Gate>());
  }
  Tensor forward(const Tensor& x) { return gate->call({stem(x)}).to_tensor(); }
  nn::Linear stem{nullptr};
  std::shared_ptr<Gate> gate;
};

/// Marks every node it records, to show which nodes came through the create_node hook.
class MarkingTracer : public RobustTracer {
 public:
  Node& create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                    std::source_location where) override {
    Node& node = RobustTracer::create_node(op, target, std::move(args), std::move(kwargs), where);
    node.set_meta("marked", Argument(true));
    return node;
  }
};

}  // namespace

TEST_CASE("a collection's records hold each failure once, with its path in the model; its tracer has its own afterwards") {
  Net net;
  GraphCollection c;
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  const TraceRecords& records = c.records();
  REQUIRE(records.failures().size() == 1);
  CHECK(records.failures()[0].module == "gate");
  CHECK(records.failed_modules()[0] == net.gate.get());
  // The list has no forward: it is a container, not a failed module (issue 49); its children
  // are traced as roots in its place.
  CHECK(c.failure(*net.gate->blocks) == nullptr);
  CHECK(&c.failures() == &records.failures());  // the collection's failures are the records', not a copy
  CHECK(c.failure(*net.gate) == &records.failures()[0]);
  REQUIRE(records.observed_inputs(*net.gate->fc) != nullptr);
  CHECK(to_string(records.observed_inputs(*net.gate->fc)->at(0).shape) == "[2, 4]");
  CHECK_FALSE(records.is_unvisited(*net.stem));
  CHECK_FALSE(records.is_unvisited((*net.gate->blocks)[0]));  // the failed list's child, traced as a root
  CHECK(records.model() != nullptr);
  // The run over, the tracer writes into its own records again: the collection's stay as they are.
  CHECK(c.tracer().failures().empty());
  (void)c.tracer().trace(*net.gate, {InputSpec(Shape{2, 4})});
  REQUIRE(c.tracer().failures().size() == 1);
  CHECK(c.tracer().failures()[0].module == "");  // under the traced root
  CHECK(c.failures().size() == 1);
}

TEST_CASE("a tracer writes into the records it is given: a model's records name failures by their path in the model") {
  Net net;
  SUBCASE("records of any roots: paths under the traced root") {
    auto records = std::make_shared<TraceRecords>();
    RobustTracer tracer(records);
    (void)tracer.trace(*net.gate, {InputSpec(Shape{2, 4})});
    REQUIRE(records->failures().size() == 1);
    CHECK(records->failures()[0].module == "");
    CHECK(tracer.failure(*net.gate) == &records->failures()[0]);
  }
  SUBCASE("a model's records: paths in the model, whatever the traced root") {
    auto records = std::make_shared<TraceRecords>(std::make_shared<const ModuleIndex>(net));
    RobustTracer tracer;
    tracer.use_records(records);
    (void)tracer.trace(*net.gate, {InputSpec(Shape{2, 4})});
    REQUIRE(records->failures().size() == 1);
    CHECK(records->failures()[0].module == "gate");
    tracer.use_records(nullptr);  // back to its own, which saw nothing
    CHECK(tracer.failures().empty());
    CHECK(records->failures().size() == 1);
  }
}

namespace {

/// Tries to give the tracer that traces it other records from its forward.
class SwapsRecords : public TypedModule<SwapsRecords> {
 public:
  explicit SwapsRecords(RobustTracer& t) : tracer(&t) {}
  Tensor forward(const Tensor& x) {
    tracer->use_records(std::make_shared<TraceRecords>());
    return relu(x);
  }
  RobustTracer* tracer;
};

}  // namespace

TEST_CASE("records cannot be swapped while the tracer traces: the module that tries fails, the records stay") {
  RobustTracer tracer;
  SwapsRecords model(tracer);
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 4})});
  REQUIRE(tracer.failures().size() == 1);
  CHECK(tracer.failures()[0].kind == "std::logic_error");
  CHECK(tracer.failures()[0].message == "RobustTracer::use_records: the tracer is tracing; give it records between traces");
  g.lint();
}

TEST_CASE("every graph of a collection is recorded through the tracer's create_node, failed and leaf roots too") {
  for (const char* name : {"net", "resnet50_fail1"}) {
    CAPTURE(name);
    Net net;
    const std::shared_ptr<Module> zoo_model = std::string(name) == "net" ? nullptr : zoo::create(name);
    Module& model = zoo_model ? *zoo_model : static_cast<Module&>(net);
    const InputSpec spec = zoo_model ? InputSpec(Shape{1, 3, 64, 64}) : InputSpec(Shape{2, 4});
    GraphCollection marked(std::make_unique<MarkingTracer>());
    marked.recursive_trace(model, {spec});
    const GraphCollection plain = recursive_trace(model, {spec});
    REQUIRE(marked.size() == plain.size());
    CHECK(marked.size() == (zoo_model ? 9u : 3u));  // the model, then the children of failed modules
    std::size_t leaf_roots = 0;
    for (std::size_t i = 0; i < marked.size(); ++i) {
      const GraphCollection::Entry& e = *(marked.begin() + static_cast<std::ptrdiff_t>(i));
      CAPTURE(e.path);
      for (const Node& node : e.graph.nodes()) {
        CAPTURE(node.name());
        if (node.op() != OpKind::output) CHECK(node.meta("marked") != nullptr);
      }
      // The same graph as the plain tracer's, but for the marks.
      CHECK(e.graph.size() == (plain.begin() + static_cast<std::ptrdiff_t>(i))->graph.size());
      if (e.graph.size() <= 4 && !e.path.empty()) ++leaf_roots;
    }
    CHECK(leaf_roots == marked.size() - 1);  // every child traced as a root is one call_module
  }
}

namespace {

/// Branches on its input's data: a symbolic trace fails, a run by execution does not.
class DataGate : public TypedModule<DataGate> {
 public:
  Tensor forward(const Tensor& x) { return x.sum().item<float>() > 0 ? relu(x) : x; }
};

/// Holds a gate it may share; calls it when told to.
class Wrapper : public TypedModule<Wrapper> {
 public:
  Wrapper(std::shared_ptr<DataGate> g, bool calls) : calls_gate(calls) { gate = register_module("gate", std::move(g)); }
  Tensor forward(const Tensor& x) { return calls_gate ? gate->call({x}).to_tensor() : relu(x); }
  bool calls_gate;
  std::shared_ptr<DataGate> gate;
};

/// One gate registered twice, as a.gate and b.gate; only b calls it.
class SharedGate : public TypedModule<SharedGate> {
 public:
  SharedGate() {
    auto g = std::make_shared<DataGate>();
    a = register_module("a", std::make_shared<Wrapper>(g, false));
    b = register_module("b", std::make_shared<Wrapper>(g, true));
  }
  Tensor forward(const Tensor& x) { return b->call({a->call({x})}).to_tensor(); }
  std::shared_ptr<Wrapper> a, b;
};

}  // namespace

TEST_CASE("a module registered twice is named by its first path, as fx names it, and its capture by execution marks its call") {
  SharedGate model;
  GraphCollection c;
  c.capture_failed_by_execution();
  c.recursive_trace(model, {InputSpec(Shape{2, 4})});
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].module == "a.gate");  // the module's path in the model: its first
  REQUIRE(c.failures()[0].by_execution != nullptr);
  REQUIRE(c.failures()[0].by_execution->graph != nullptr);
  const Node* call = c.find("")->find_node("a_gate");  // called through b, named by its first path
  REQUIRE(call != nullptr);
  CHECK(call->target() == "a.gate");
  REQUIRE(call->meta("by_execution") != nullptr);
  CHECK(*call->meta("by_execution")->get_if<std::string>() == "by_execution_0");
}

TEST_CASE("a tracer given to a collection writes into the records it had again after the run") {
  Net net;
  auto mine = std::make_shared<TraceRecords>();
  GraphCollection c(std::make_unique<RobustTracer>(mine));
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  CHECK(&c.tracer().records() == mine.get());
  CHECK(mine->failures().empty());  // the run's failures are the collection's
  CHECK(c.failures().size() == 1);
  const std::vector<ModuleFailure>* before = &c.failures();
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  CHECK(&c.failures() == before);  // the records object lives as long as the collection
  CHECK(c.failures().size() == 1);
}
