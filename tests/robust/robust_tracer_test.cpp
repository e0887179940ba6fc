// RobustTracer and recursive_trace on the zoo's failing models: failures localised to the
// injected modules, one-pass rollback equal to registering the failed modules as leaves,
// ModelOpt's graph counts, failure records with file:line, and the captured graph equal to eager.
#include "support/checks.hpp"
#include "support/result_by_running.hpp"

#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/failures.hpp"
#include "symtrace/zoo/mlp.hpp"
#include "symtrace/zoo/resnet.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <string>
#include <vector>

using namespace symtrace;
using testing::max_rel_error;

namespace {

std::vector<std::string> failed_paths(const GraphCollection& c) {
  std::vector<std::string> out;
  for (const ModuleFailure& f : c.failures()) out.push_back(f.module);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

InputSpec example_spec(const std::string& name) {
  const zoo::ExampleInput& input = zoo::info(name).inputs.at(0);
  return InputSpec(Shape(input.shape), input.dtype);
}

}  // namespace

TEST_CASE("recursive_trace finds exactly the injected failures, with ModelOpt's graph counts and file:line") {
  struct Expected {
    const char* model;
    std::size_t graphs;  // ModelOpt's: 9, 33, 117 and 49 (bench/fx/README.md)
    const char* file;
    int line;
  };
  for (const Expected& e : {Expected{"resnet50_fail1", 9, "resnet.cpp", zoo::FailingBottleneckImpl::data_branch_line},
                            Expected{"resnet50_fail4", 33, "resnet.cpp", zoo::FailingBottleneckImpl::data_branch_line},
                            Expected{"resnet50_fail16", 117, "resnet.cpp", zoo::FailingBottleneckImpl::data_branch_line},
                            Expected{"deep_mlp_1000_fail16", 49, "mlp.cpp", zoo::FailingMLPBlockImpl::data_branch_line}}) {
    CAPTURE(e.model);
    auto model = zoo::create(e.model);
    model->eval();
    const GraphCollection c = recursive_trace(*model, {example_spec(e.model)});
    CHECK(failed_paths(c) == sorted(zoo::info(e.model).untraceable));
    CHECK(c.size() == e.graphs);
    for (const ModuleFailure& f : c.failures()) {
      CAPTURE(f.module);
      CHECK(f.kind == "TraceError");
      CHECK(std::string_view(f.where.file_name()).ends_with(e.file));
      CHECK(f.where.line() == static_cast<std::uint_least32_t>(e.line));
      CHECK(f.message.find("a symbolic tensor was read as data (to_bool())") != std::string::npos);
    }
    for (const GraphCollection::Entry& entry : c) CHECK_NOTHROW(entry.graph.lint());
    // The model's graph has one call_module leaf per failed block, taking the real arguments.
    const Graph& root = *c.find("");
    for (const std::string& path : zoo::info(e.model).untraceable) {
      const Node* leaf = root.find_node(fmt::format("{}", [&] { std::string n = path; std::replace(n.begin(), n.end(), '.', '_'); return n; }()));
      REQUIRE(leaf != nullptr);
      CHECK(leaf->op() == OpKind::call_module);
      CHECK(leaf->target() == path);
      CHECK(leaf->args().size() == 1);
    }
  }
}

TEST_CASE("a robust trace equals a plain trace with the failed modules registered as leaves") {
  for (const char* name : {"resnet50_fail4", "deep_mlp_1000_fail16"}) {
    CAPTURE(name);
    auto model = zoo::create(name);
    RobustTracer robust;
    const Graph g = robust.trace(*model, {example_spec(name)});
    Tracer plain;
    // What the robust tracer knows of a failed module's result: what runs of it tell.
    plain.register_leaf<zoo::FailingBottleneckImpl>(testing::result_by_running);
    plain.register_leaf<zoo::FailingMLPBlockImpl>(testing::result_by_running);
    CHECK(to_string(g) == to_string(plain.trace(*model, {example_spec(name)})));
    CHECK_NOTHROW(g.lint());
  }
}

TEST_CASE("the graph a robust trace captures runs equal to eager, failed modules running eagerly") {
  for (const char* name : {"resnet50_fail16", "deep_mlp_1000_fail16", "mixed_failures"}) {
    CAPTURE(name);
    auto model = zoo::create(name);
    model->eval();
    Shape shape = example_spec(name).shape;
    if (shape.rank() == 4) shape[2] = shape[3] = 32;  // small images keep it fast
    const GraphCollection c = recursive_trace(*model, {InputSpec(shape)});
    Generator gen(7);
    const Tensor x = randn(shape.sizes(), gen);
    const Tensor eager = model->call({x}).to_tensor();
    CHECK(max_rel_error(Interpreter(*model, *c.find("")).run({x}).to_tensor(), eager) <= 1e-5);
  }
}

TEST_CASE("mixed_failures: each untraceable pattern fails in its own module; the rest is traced or unvisited") {
  auto model = zoo::create("mixed_failures");
  const GraphCollection c = recursive_trace(*model, {example_spec("mixed_failures")});
  CHECK(failed_paths(c) == std::vector<std::string>{"gate", "opaque", "repeat", "topk"});
  const auto& m = dynamic_cast<const zoo::MixedFailuresImpl&>(*model);
  CHECK(c.is_failed(*m.gate));
  CHECK(c.failure_msg(*m.gate)->starts_with("TraceError: "));
  CHECK(c.failure(*m.opaque)->where.line() != 0);
  CHECK(c.is_unvisited(*m.unused));
  CHECK_FALSE(c.is_unvisited(*m.stem));
  CHECK_FALSE(c.is_failed(*m.stem));
  // The children of each failed module are traced as roots of their own. GatedConv branches
  // before calling either conv, so they were never called: their inputs have unknown shapes.
  for (const GraphCollection::Entry& entry : c) CHECK_NOTHROW(entry.graph.lint());
  const Graph* conv = c.find("gate.conv_a");
  REQUIRE(conv != nullptr);
  CHECK(to_string(*conv->find_node("x")->tensor_meta()) == "float32[...]");
  CHECK(conv->size() == 3);  // placeholder, the conv as one call_module (a root leaf), output
  // A failed module's call_module node carries its failure (which to_dot draws); others none.
  const Graph& root = *c.find("");
  for (const ModuleFailure& f : c.failures()) {
    CAPTURE(f.module);
    const Node* node = root.find_node(f.module);
    REQUIRE(node != nullptr);
    const Argument* failure = node->meta(meta_keys::failure);
    REQUIRE(failure != nullptr);
    CHECK(*failure->get_if<std::string>() == to_string(f));
  }
  CHECK(root.find_node("stem_0")->meta(meta_keys::failure) == nullptr);
  CHECK(to_dot(root).find("TraceError") != std::string::npos);
}

namespace {

/// Runs a recursive_trace of `collection` from its forward: a trace inside the running one.
class Reentrant : public TypedModule<Reentrant> {
 public:
  explicit Reentrant(GraphCollection& c) : collection(&c) { fc = register_module("fc", nn::Linear(4, 4)); }
  static constexpr int call_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    collection->recursive_trace(*fc, {InputSpec(Shape{2, 4})});
    return fc(x);
  }
  GraphCollection* collection;
  nn::Linear fc{nullptr};
};

/// A stem, then `Inner` (made with the collection) on its output.
template <class Inner>
class Holds : public TypedModule<Holds<Inner>> {
 public:
  explicit Holds(GraphCollection& c) {
    stem = this->register_module("stem", nn::Linear(4, 4));
    inner = this->register_module("inner", std::make_shared<Inner>(c));
  }
  Tensor forward(const Tensor& x) { return inner->call({stem(x)}).to_tensor(); }
  nn::Linear stem{nullptr};
  std::shared_ptr<Inner> inner;
};

}  // namespace

TEST_CASE("a recursive_trace inside a forward the same collection is tracing is refused; the running one goes on") {
  GraphCollection c;
  Holds<Reentrant> net(c);
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  REQUIRE(c.failures().size() == 1);
  const ModuleFailure& f = c.failures()[0];
  CHECK(f.module == "inner");
  CHECK(f.kind == "std::invalid_argument");
  CHECK(f.message == fmt::format("{}:{}: this GraphCollection is already running a recursive_trace; use another "
                                 "GraphCollection for a trace inside a trace",
                                 __FILE__, Reentrant::call_line));
  // The running trace kept its results: inner is a failed leaf, its child a graph of its own.
  CHECK(c.size() == 2);
  CHECK(c.find("inner.fc") != nullptr);
  CHECK_FALSE(c.is_unvisited(*net.stem));
  CHECK(c.hierarchy()[c.hierarchy().index_of("inner")].status == ModuleStatus::failed);
  for (const GraphCollection::Entry& e : c) e.graph.lint();
}

namespace {

/// Fails a symbolic trace; run eagerly (capture by execution, after the trace), it starts a
/// recursive_trace of the collection that is running it.
class CapturedReentrant : public TypedModule<CapturedReentrant> {
 public:
  explicit CapturedReentrant(GraphCollection& c) : collection(&c) { fc = register_module("fc", nn::Linear(4, 4)); }
  static constexpr int call_line = __LINE__ + 4;
  Tensor forward(const Tensor& x) {
    const Tensor h = fc(x);
    const bool positive = (h.sum() > 0).to_bool();  // data-dependent: a symbolic trace fails here
    collection->recursive_trace(*fc, {InputSpec(Shape{2, 4})});
    return positive ? h : fc(h);
  }
  GraphCollection* collection;
  nn::Linear fc{nullptr};
};

/// Clears the results of the tracer that is tracing it, from its forward (a traced-through
/// module) or from its metadata run (a registered leaf).
class ClearsResults : public TypedModule<ClearsResults> {
 public:
  explicit ClearsResults(GraphCollection& c) : collection(&c) { fc = register_module("fc", nn::Linear(4, 4)); }
  Tensor forward(const Tensor& x) {
    collection->tracer().clear_results();
    return fc(x);
  }
  GraphCollection* collection;
  nn::Linear fc{nullptr};
};

}  // namespace

TEST_CASE("a recursive_trace from a failed module run by execution after the trace is refused; the run keeps its results") {
  GraphCollection c;
  c.capture_failed_by_execution();
  Holds<CapturedReentrant> net(c);
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  REQUIRE(c.failures().size() == 1);
  const ModuleFailure& f = c.failures()[0];
  CHECK(f.module == "inner");
  CHECK(f.kind == "TraceError");
  REQUIRE(f.by_execution != nullptr);
  CHECK(f.by_execution->graph == nullptr);
  CHECK(f.by_execution->error ==
        fmt::format("running it failed: std::invalid_argument: {}:{}: this GraphCollection is already running a "
                    "recursive_trace; use another GraphCollection for a trace inside a trace",
                    __FILE__, CapturedReentrant::call_line));
  CHECK(c.size() == 2);  // the model, and the failed module's child as a root
  CHECK(c.find("inner.fc") != nullptr);
  CHECK(c.hierarchy()[c.hierarchy().index_of("inner")].status == ModuleStatus::failed);
  for (const GraphCollection::Entry& e : c) e.graph.lint();
}

TEST_CASE("clear_results() from a forward the tracer is running forgets what came before and breaks nothing") {
  GraphCollection c;
  Holds<ClearsResults> net(c);
  SUBCASE("from a traced-through module's forward") {}
  SUBCASE("from a registered leaf's metadata run") { c.tracer().register_leaf<ClearsResults>(); }
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  REQUIRE(c.size() == 1);
  CHECK(c.failures().empty());
  const Graph& root = c.at(net);
  root.lint();
  const bool leaf = c.tracer().is_registered_leaf<ClearsResults>();
  std::vector<std::string> targets;
  for (const Node& n : root.nodes())
    if (n.op() == OpKind::call_module) targets.emplace_back(n.target());
  CHECK(targets == (leaf ? std::vector<std::string>{"stem", "inner"} : std::vector<std::string>{"stem", "inner.fc"}));
  const Tensor x = randn({2, 4});
  CHECK(max_rel_error(Interpreter(net, root).run({x}).to_tensor(), net.forward(x)) <= 1e-5);
}

namespace {

/// Runs out of memory in its forward (symbolically or not), after its child made a node.
class OutOfMemory : public TypedModule<OutOfMemory> {
 public:
  OutOfMemory() { fc = register_module("fc", nn::Linear(4, 4)); }
  explicit OutOfMemory(GraphCollection&) : OutOfMemory() {}  // as Holds makes its inner module
  Tensor forward(const Tensor& x) {
    (void)fc(x);
    throw std::bad_alloc();
  }
  nn::Linear fc{nullptr};
};

}  // namespace

TEST_CASE("std::bad_alloc in a forward is never a module's failure: it reaches the caller and the collection is empty") {
  GraphCollection c;
  Holds<OutOfMemory> net(c);
  OutOfMemory alone;
  for (Module* root : {static_cast<Module*>(&net), static_cast<Module*>(&alone)}) {  // from a child, from the root
    RobustTracer tracer;
    CHECK_THROWS_AS((void)tracer.trace(*root, {InputSpec(Shape{2, 4})}), std::bad_alloc);
    CHECK(tracer.failures().empty());
    CHECK_FALSE(tracer.is_tracing());
  }

  c.recursive_trace(*net.stem, {InputSpec(Shape{2, 4})});  // something to replace
  REQUIRE(c.size() == 1);
  CHECK_THROWS_AS(c.recursive_trace(net, {InputSpec(Shape{2, 4})}), std::bad_alloc);
  CHECK(c.size() == 0);
  CHECK(c.failures().empty());
  CHECK(c.hierarchy().size() == 0);
  CHECK(c.tracer().failures().empty());
  // The tracer is free for the next trace, which the same model passes once the leaf is known.
  c.tracer().register_leaf<OutOfMemory>([](const Module&, const ValueList& args) {
    return OutputMeta::single(TensorMeta(args[0].to_tensor().meta()));
  });
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  CHECK(c.size() == 1);
  CHECK(c.failures().empty());
  for (const GraphCollection::Entry& e : c) e.graph.lint();
}

TEST_CASE("a child traced as a root gets the input shapes seen at its call before its parent failed") {
  auto model = zoo::create("resnet50_fail1");
  const GraphCollection c = recursive_trace(*model, {example_spec("resnet50_fail1")});
  const Graph* conv3 = c.find("layer3.0.conv3");
  REQUIRE(conv3 != nullptr);
  CHECK(to_string(*conv3) == R"(graph():
    %x : float32[1, 256, 14, 14] [num_users=1] = placeholder[target=x]
    %root : float32[1, 1024, 14, 14] [num_users=1] = call_module[target=](args = (%x,), kwargs = {})
    return root
)");
  // Downstream of the failed block, shapes are known: the block was run for its output's.
  const Graph& root = *c.find("");
  CHECK(to_string(*root.find_node("layer3_0")->tensor_meta()) == "float32[1, 1024, 14, 14]");
  CHECK(to_string(*root.find_node("fc")->tensor_meta()) == "float32[1, 1000]");
  CHECK(c.failures()[0].result_by_execution);
  CHECK(to_string(*root.find_node("layer2_3_relu_2")->tensor_meta()) == "float32[1, 512, 28, 28]");
}

TEST_CASE("a module replaced in the model after recursive_trace keeps its records, and no other module takes them") {
  // The failed child has a type name of its own; once replaced, nothing but the collection holds it.
  struct Named : TypedModule<Named> {
    Named() { set_type_name("NamedGate"); }
    Tensor forward(const Tensor& x) { return x.sum().to_bool() ? x : -x; }
  };
  struct Model : TypedModule<Model> {
    Model() { gate = register_module("gate", std::make_shared<Named>()); }
    Tensor forward(const Tensor& x) { return gate->call({x}).to_tensor().relu(); }
    std::shared_ptr<Module> gate;
  };
  Model model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 3})});
  const std::string report_before = coverage_report(c, "model");
  const Module* old = model.gate.get();
  model.gate = model.replace_module("gate", std::make_shared<Named>());  // the old one is dropped
  // A new module of the same size may be allocated where a freed one was: it is not the old one.
  std::vector<std::shared_ptr<Module>> fresh;
  for (int i = 0; i < 8; ++i) fresh.push_back(std::make_shared<Named>());
  for (const auto& m : fresh) CHECK_FALSE(c.is_failed(*m));
  CHECK_FALSE(c.is_failed(*model.gate));
  CHECK(c.is_failed(*old));
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].module == "gate");
  CHECK(c.failures()[0].type == "NamedGate");
  CHECK(c.hierarchy()[c.hierarchy().index_of(*old)].type == "NamedGate");
  CHECK(coverage_report(c, "model") == report_before);
  CHECK(report_to_json(make_report(c, "model")).find("\"NamedGate\"") != std::string::npos);
}
