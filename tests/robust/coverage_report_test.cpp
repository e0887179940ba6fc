// The module hierarchy with statuses, and the coverage report as text and JSON.
//
// Boost.Graph's headers come first: the hierarchy's Boost graph works with any include order.
#include <boost/graph/breadth_first_search.hpp>

#include "symtrace/robust/module_hierarchy_bgl.hpp"
#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace symtrace;

namespace {

/// Reads data: fails.
class Gate : public TypedModule<Gate> {
 public:
  Gate() { fc = register_module("fc", nn::Linear(4, 4)); }
  static constexpr int data_line = __LINE__ + 3;
  Tensor forward(const Tensor& x) {
    const Tensor h = fc(x);
    return h.sum().item<float>() > 0 ? h : -h;
  }
  nn::Linear fc{nullptr};
};

/// Registered as a leaf: its child is never called.
class Skipped : public TypedModule<Skipped> {
 public:
  Skipped() { fc = register_module("fc", nn::Linear(4, 4)); }
  Tensor forward(const Tensor& x) { return fc(x); }
  nn::Linear fc{nullptr};
};

class Net : public TypedModule<Net> {
 public:
  Net() {
    stem = register_module("stem", nn::Linear(4, 4));
    gate = register_module("gate", std::make_shared<Gate>());
    skip = register_module("skip", std::make_shared<Skipped>());
    act = register_module("act", nn::ReLU());
    unused = register_module("unused", nn::Linear(4, 4));
    register_module("alias", stem.ptr());
  }
  Tensor forward(const Tensor& x) { return act(skip->call({gate->call({stem(x)}).to_tensor()}).to_tensor()); }
  nn::Linear stem{nullptr};
  std::shared_ptr<Gate> gate;
  std::shared_ptr<Skipped> skip;
  nn::ReLU act{nullptr};
  nn::Linear unused{nullptr};
};

GraphCollection trace_net(Net& net) {
  GraphCollection c;
  c.tracer().register_leaf<Skipped>();
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  return c;
}

}  // namespace

TEST_CASE("the module hierarchy gives each module its status, failure and graph") {
  Net net;
  const GraphCollection c = trace_net(net);
  const ModuleHierarchy& h = c.hierarchy();
  REQUIRE(h.size() == 8);  // alias is stem: one module
  std::vector<std::string> listed;
  for (const ModuleRecord& r : h) listed.push_back(fmt::format("{}:{}:{}", h.path(r.index), r.type, r.status));
  CHECK(listed == std::vector<std::string>{":Net:traced", "stem:Linear:leaf", "gate:Gate:failed", "gate.fc:Linear:leaf",
                                           "skip:Skipped:leaf", "skip.fc:Linear:unvisited", "act:ReLU:leaf",
                                           "unused:Linear:unvisited"});
  CHECK(h.count(ModuleStatus::traced) == 1);
  CHECK(h.count(ModuleStatus::leaf) == 4);
  CHECK(h.count(ModuleStatus::failed) == 1);
  CHECK(h.count(ModuleStatus::unvisited) == 2);

  const ModuleRecord& gate = h[h.index_of("gate")];
  CHECK(gate.module == net.gate.get());
  REQUIRE(gate.failure != nullptr);
  CHECK(gate.failure == c.failure(*net.gate));
  CHECK(gate.failure->where.line() == static_cast<std::uint_least32_t>(Gate::data_line));
  CHECK(gate.graph == nullptr);  // a failed module is a leaf in its parent's graph
  CHECK(h[h.index_of("gate.fc")].graph == c.find("gate.fc"));
  CHECK(h[0].graph == c.find(""));
  CHECK(h[0].depth == 0);
  CHECK(h[h.index_of("gate.fc")].depth == 2);

  // The edges: parents to children; a module registered twice has two parents' edges.
  CHECK(h.children(0) == std::vector<std::size_t>{h.index_of("stem"), h.index_of("gate"), h.index_of("skip"),
                                                  h.index_of("act"), h.index_of("unused")});
  CHECK(h.children(h.index_of("gate")) == std::vector<std::size_t>{h.index_of("gate.fc")});
  CHECK(h.parents(h.index_of("gate.fc")) == std::vector<std::size_t>{h.index_of("gate")});
  CHECK(h.parents(0).empty());
  CHECK(h.index_of("alias") == h.index_of("stem"));  // a second path finds the module
  CHECK(h.index_of(*net.stem.ptr()) == h.index_of("stem"));
  CHECK(h.index_of("gate.nope") == ModuleHierarchy::npos);
  CHECK(h.index_of(*nn::Linear(2, 2).ptr()) == ModuleHierarchy::npos);
  CHECK(h.index_of("gate.") == ModuleHierarchy::npos);
  CHECK_THROWS_WITH_AS((void)h[8], "ModuleHierarchy: index 8 is out of range: the model has 8 modules; use index_of() to find one",
                       std::out_of_range);
}

TEST_CASE("the hierarchy is a Boost graph that Boost's algorithms walk") {
  Net net;
  const GraphCollection c = trace_net(net);
  const bgl::HierarchyGraph& g = bgl::graph(c.hierarchy());
  CHECK(boost::num_vertices(g) == 8);
  CHECK(boost::num_edges(g) == 7);  // stem is a child of the model once (children() lists it once)
  // Breadth first from the model: the order tools walk the tree in, and the unvisited modules.
  struct Visitor : boost::default_bfs_visitor {
    std::vector<std::string>* order;
    const ModuleHierarchy* hierarchy;
    void discover_vertex(bgl::HierarchyGraph::vertex_descriptor v, const bgl::HierarchyGraph& graph) const {
      order->push_back(fmt::format("{}={}", hierarchy->path(v), graph[v].status));
    }
  };
  std::vector<std::string> order;
  Visitor visitor;
  visitor.order = &order;
  visitor.hierarchy = &c.hierarchy();
  boost::breadth_first_search(g, boost::vertex(0, g), boost::visitor(visitor));
  CHECK(order == std::vector<std::string>{"=traced", "stem=leaf", "gate=failed", "skip=leaf", "act=leaf",
                                          "unused=unvisited", "gate.fc=leaf", "skip.fc=unvisited"});
}

namespace {

/// Holds `shared` twice, with another child between.
class Twice : public TypedModule<Twice> {
 public:
  explicit Twice(const nn::Linear& shared) {
    first = register_module("first", shared);
    other = register_module("other", nn::ReLU());
    register_module("again", shared.ptr());
  }
  Tensor forward(const Tensor& x) { return other(first(x)); }
  nn::Linear first{nullptr};
  nn::ReLU other{nullptr};
};

/// `shared` under the model and under `twice` (twice there).
class Shared : public TypedModule<Shared> {
 public:
  Shared() {
    shared = register_module("shared", nn::Linear(4, 4));
    twice = register_module("twice", std::make_shared<Twice>(shared));
  }
  Tensor forward(const Tensor& x) { return twice->call({shared(x)}).to_tensor(); }
  nn::Linear shared{nullptr};
  std::shared_ptr<Twice> twice;
};

}  // namespace

TEST_CASE("a module registered under two parents has both as parents, and one edge from each") {
  Shared net;
  const GraphCollection c = recursive_trace(net, {InputSpec(Shape{2, 4})});
  const ModuleHierarchy& h = c.hierarchy();
  REQUIRE(h.size() == 4);  // the model, shared, twice, twice.other
  const std::size_t shared = h.index_of("shared"), twice = h.index_of("twice"), other = h.index_of("twice.other");
  CHECK(h.index_of("twice.first") == shared);
  CHECK(h.index_of("twice.again") == shared);
  CHECK(h.children(0) == std::vector<std::size_t>{shared, twice});
  CHECK(h.children(twice) == std::vector<std::size_t>{shared, other});  // registration order, `again` not repeated
  CHECK(h.parents(shared) == std::vector<std::size_t>{0, twice});
  CHECK(h.parents(other) == std::vector<std::size_t>{twice});
  const bgl::HierarchyGraph& g = bgl::graph(h);
  CHECK(boost::num_edges(g) == 4);
  CHECK(boost::in_degree(shared, g) == 2);
  CHECK(boost::out_degree(twice, g) == 2);
}

TEST_CASE("the coverage report as text: the tree with statuses, the failures with file:line, graphs, unvisited") {
  Net net;
  const GraphCollection c = trace_net(net);
  const std::string file = __FILE__;
  CHECK(coverage_report(c, "net") == fmt::format(R"(coverage of net (Net)
  modules: 8 (1 traced, 4 leaf, 1 failed, 2 unvisited)
  graphs: 2 (9 nodes)

module tree
<model> (Net)  traced  [graph: 6 nodes]
├── stem (Linear)  leaf
├── gate (Gate)  failed: TraceError at {0}:{1}
│   └── fc (Linear)  leaf  [graph: 3 nodes]
├── skip (Skipped)  leaf
│   └── fc (Linear)  unvisited
├── act (ReLU)  leaf
├── unused (Linear)  unvisited
└── alias (Linear)  the module at 'stem'

failures (1)
  gate (Gate) at {0}:{1}
    TraceError: a symbolic tensor was read as data (item()) in 'gate' (Gate): control flow or C++ values that depend on tensor data cannot be traced; make the module a leaf (Tracer::register_leaf) or use where() or cond()
    its result in its caller's graph: shape by execution (it was run on inputs of its call's shapes)

graphs (2)
  <model> (Net): 6 nodes
  gate.fc (Linear): 3 nodes

unvisited (2)
  skip.fc (Linear)
  unused (Linear)
)",
                                                 file, Gate::data_line));
}

TEST_CASE("the coverage report as JSON: the README's report format") {
  Net net;
  const GraphCollection c = trace_net(net);
  const nlohmann::json doc = nlohmann::json::parse(coverage_report(c, "net", ReportFormat::json));
  const std::string source = fmt::format("{}:{}", __FILE__, Gate::data_line);
  const nlohmann::json expected = {
      {"model", "net"},
      {"graphs", {{{"module", ""}, {"type", "Net"}, {"nodes", 6}}, {{"module", "gate.fc"}, {"type", "Linear"}, {"nodes", 3}}}},
      {"failed",
       {{{"module", "gate"},
         {"type", "Gate"},
         {"kind", "TraceError"},
         {"message", c.failures().at(0).message},
         {"source", source},
         {"op", nullptr},
         {"result_by_execution", true},
         {"by_execution", nullptr}}}},
      {"unvisited", {"skip.fc", "unused"}},
      {"modules",
       {{{"module", ""}, {"type", "Net"}, {"status", "traced"}},
        {{"module", "stem"}, {"type", "Linear"}, {"status", "leaf"}},
        {{"module", "gate"}, {"type", "Gate"}, {"status", "failed"}},
        {{"module", "gate.fc"}, {"type", "Linear"}, {"status", "leaf"}},
        {{"module", "skip"}, {"type", "Skipped"}, {"status", "leaf"}},
        {{"module", "skip.fc"}, {"type", "Linear"}, {"status", "unvisited"}},
        {{"module", "act"}, {"type", "ReLU"}, {"status", "leaf"}},
        {{"module", "unused"}, {"type", "Linear"}, {"status", "unvisited"}}}},
      {"totals",
       {{"modules", 8}, {"traced", 1}, {"leaf", 4}, {"failed", 1}, {"unvisited", 2}, {"graphs", 2}, {"nodes", 9}}}};
  CHECK(doc == expected);
  CHECK(c.failures().at(0).message.starts_with(source + ": a symbolic tensor was read as data (item())"));
}

TEST_CASE("the coverage report of a zoo model with failing blocks counts what recursive_trace made") {
  auto model = zoo::create("resnet50_fail4");
  const GraphCollection c = recursive_trace(*model, {InputSpec(Shape{1, 3, 64, 64})});
  const nlohmann::json doc = nlohmann::json::parse(coverage_report(c, "resnet50_fail4", ReportFormat::json));
  CHECK(doc["graphs"].size() == 33);
  CHECK(doc["failed"].size() == 4);
  CHECK(doc["modules"].size() == model->named_modules().size());
  std::size_t nodes = 0;
  for (const GraphCollection::Entry& e : c) nodes += e.graph.size();
  CHECK(doc["totals"]["nodes"] == nodes);
  CHECK(doc["totals"]["failed"] == 4);
  CHECK(doc["totals"]["unvisited"] == 0);
  // Every failed block's children were traced as roots: built-in layers are leaves there, the
  // downsample Sequential is traced.
  const ModuleHierarchy& h = c.hierarchy();
  for (const ModuleFailure& f : c.failures()) {
    for (std::size_t child : h.children(h.index_of(f.module))) {
      CAPTURE(h.path(child));
      CHECK(h[child].graph != nullptr);
      CHECK(h[child].status == (h[child].type == "Sequential" ? ModuleStatus::traced : ModuleStatus::leaf));
    }
  }
  const std::string text = coverage_report(c, "resnet50_fail4");
  CHECK(text.starts_with("coverage of resnet50_fail4 (ResNet)\n"));
  CHECK(text.find("failures (4)\n") != std::string::npos);
  CHECK(text.find("graphs (33)\n") != std::string::npos);
}

TEST_CASE("a leaf traced as a root in a collection has exactly the graph a trace of it alone gives") {
  // Note [A remembered leaf root]: such graphs are built without tracing; they must be the
  // graphs a RobustTracer makes for the leaf as a root, node for node, whether the leaf's
  // inputs had a known shape (a remembered call) or an unknown rank (after a failure).
  const std::source_location here = std::source_location::current();
  for (const std::string name : {"resnet50_fail1", "resnet50_fail16", "deep_mlp_1000_fail16"}) {
    CAPTURE(name);
    auto model = zoo::create(name);
    std::vector<InputSpec> specs;
    for (const zoo::ExampleInput& input : zoo::info(name).inputs) specs.emplace_back(Shape(input.shape), input.dtype);
    // Failed blocks not run for their results: their outputs, the inputs of the blocks after
    // them, are then of unknown rank.
    GraphCollection c;
    c.tracer().set_result_by_execution(false);
    c.recursive_trace(*model, specs, {}, here);
    std::size_t known = 0;
    std::size_t unknown = 0;
    for (const GraphCollection::Entry& e : c) {
      if (!e.module->is_builtin_layer()) continue;
      CAPTURE(e.path);
      std::vector<InputSpec> inputs;
      for (const Node& n : e.graph.nodes()) {
        if (n.op() == OpKind::placeholder) inputs.emplace_back(n.tensor_meta()->shape, n.tensor_meta()->dtype);
      }
      (inputs.at(0).shape.is_rank_known() ? known : unknown) += 1;
      RobustTracer alone;
      alone.set_result_by_execution(false);
      const Graph expected = alone.trace(*e.module, inputs, {}, here);
      CHECK(graph_to_json(e.graph) == graph_to_json(expected));
      CHECK(to_string(e.graph) == to_string(expected));
    }
    CHECK(known + unknown > 0);
    if (name == "resnet50_fail1") CHECK(known > 0);
    if (name == "resnet50_fail16") CHECK(unknown > 0);
  }
}

TEST_CASE("a collection with no trace has no report") {
  const GraphCollection c;
  CHECK(c.hierarchy().empty());
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)coverage_report(c, "x"),
                       fmt::format("{}:{}: coverage_report was given a GraphCollection that holds no trace: call "
                                   "recursive_trace first",
                                   __FILE__, line)
                           .c_str(),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(GraphCollection(nullptr), doctest::Contains("GraphCollection was given a null tracer"),
                       std::invalid_argument);
}

TEST_CASE("a collection is emptied by a recursive_trace that throws, and can be traced again, moved and reused") {
  Net net;
  GraphCollection c;
  c.tracer().register_leaf<Skipped>();
  CHECK_THROWS_AS(c.recursive_trace(net, {InputSpec(Shape{2, 4}), InputSpec(Shape{2, 4})}), std::invalid_argument);
  CHECK(c.size() == 0);
  CHECK(c.hierarchy().empty());
  CHECK(c.failures().empty());
  CHECK_FALSE(c.is_failed(*net.gate));
  CHECK(c.is_unvisited(*net.stem));
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});
  const std::string first = coverage_report(c, "net");
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});  // the same again: nothing accumulates
  CHECK(coverage_report(c, "net") == first);
  CHECK(first == coverage_report(trace_net(net), "net"));

  GraphCollection moved = std::move(c);
  CHECK(coverage_report(moved, "net") == first);
  CHECK(moved.is_failed(*net.gate));
  c.recursive_trace(net, {InputSpec(Shape{2, 4})});  // a moved-from collection traces afresh
  CHECK(c.is_failed(*net.gate));
  CHECK(c.hierarchy()[c.hierarchy().index_of("skip")].status == ModuleStatus::traced);  // its own, default tracer
}

namespace {

/// A leaf whose result's width comes from a concrete argument's data.
class Narrow : public TypedModule<Narrow> {
 public:
  Tensor forward(const Tensor& x, const Tensor& width) { return x.narrow(1, 0, width.item<std::int64_t>()); }
};

class TwoWidths : public TypedModule<TwoWidths> {
 public:
  TwoWidths() {
    narrow = register_module("narrow", std::make_shared<Narrow>());
    gate = register_module("gate", std::make_shared<Gate>());
  }
  Tensor forward(const Tensor& x) {
    const Tensor a = narrow->call({x, full({1}, 2, DType::int64)}).to_tensor();
    const Tensor b = narrow->call({x, full({1}, 3, DType::int64)}).to_tensor();
    return gate->call({b}).to_tensor().sum() + a.sum();
  }
  std::shared_ptr<Narrow> narrow;
  std::shared_ptr<Gate> gate;
};

}  // namespace

TEST_CASE("a leaf called twice with equal shapes but different concrete data gets each call's own result") {
  TwoWidths model;
  GraphCollection c;
  c.tracer().register_leaf<Narrow>();
  c.recursive_trace(model, {InputSpec(Shape{2, 4})});
  const Graph& root = *c.find("");
  CHECK(to_string(*root.find_node("narrow")->tensor_meta()) == "float32[2, 2]");
  CHECK(to_string(*root.find_node("narrow_1")->tensor_meta()) == "float32[2, 3]");
  CHECK(c.is_failed(*model.gate));
  // The root graph equals a plain robust trace's.
  RobustTracer plain;
  plain.register_leaf<Narrow>();
  CHECK(to_string(root) == to_string(plain.trace(model, {InputSpec(Shape{2, 4})})));
}

TEST_CASE("a ModuleList is traced when its children were called, unvisited when none was") {
  auto model = zoo::create("mixed_failures");
  const GraphCollection c = recursive_trace(*model, {InputSpec(Shape(zoo::info("mixed_failures").inputs.at(0).shape))});
  const ModuleHierarchy& h = c.hierarchy();
  const ModuleRecord& heads = h[h.index_of("heads")];
  CHECK(heads.type == "ModuleList");
  CHECK(heads.status == ModuleStatus::traced);
  CHECK(c.is_unvisited(*heads.module));  // ModelOpt's question: the list itself is never called
  auto list = std::make_shared<nn::ModuleListImpl>();
  list->push_back(nn::Linear(2, 2));
  const GraphCollection lonely = recursive_trace(*list, {});
  CHECK(lonely.hierarchy()[0].status == ModuleStatus::failed);  // a root that cannot be called
  CHECK(lonely.hierarchy()[1].status == ModuleStatus::leaf);    // traced as a root of its own
}
