// RobustTracer on the failure patterns beyond the zoo: a failing root, a failure nested in a
// child of a failed module, a shared module failing at one call site only, exceptions of
// other types, an uncallable root, a leaf root; and fault injection at every op, in a trace
// and in recursive_trace.
#include "support/checks.hpp"
#include "support/result_by_running.hpp"

#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <stdexcept>
#include <set>
#include <string>

using namespace symtrace;
using testing::max_rel_error;

namespace {

/// Reads data in its own forward: the root itself fails.
class RootReads : public TypedModule<RootReads> {
 public:
  RootReads() { fc = register_module("fc", nn::Linear(4, 4)); }
  Tensor forward(const Tensor& x) {
    const Tensor h = fc(x);
    return h.sum().item<float>() > 0 ? h : -h;
  }
  nn::Linear fc{nullptr};
};

/// Throws a plain std::runtime_error, as a library call might.
class Throws : public TypedModule<Throws> {
 public:
  static constexpr int throw_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { throw std::runtime_error(fmt::format("library refused a {}", to_string(x.meta()))); }
};

/// Fails itself, and holds a child that fails on its own too.
class Inner : public TypedModule<Inner> {
 public:
  Inner() {
    fc = register_module("fc", nn::Linear(4, 4));
    bad = register_module("bad", std::make_shared<Throws>());
  }
  Tensor forward(const Tensor& x) {
    const Tensor h = bad->call({fc(x)}).to_tensor();  // fails: bad becomes a leaf here
    return h.to_bool() ? h : x;                       // then this fails too
  }
  nn::Linear fc{nullptr};
  std::shared_ptr<Throws> bad;
};

/// Traceable on a matrix; on anything else it reads data.
class Picky : public TypedModule<Picky> {
 public:
  Tensor forward(const Tensor& x) {
    if (x.dim() == 2) return x.relu();
    return x * (x.sum().item<float>() > 0 ? 1.0 : -1.0);
  }
};

class Shared : public TypedModule<Shared> {
 public:
  Shared() { picky = register_module("picky", std::make_shared<Picky>()); }
  Tensor forward(const Tensor& x) {
    const Tensor a = picky->call({x}).to_tensor();               // fine: a matrix
    const Tensor b = picky->call({x.unsqueeze(0)}).to_tensor();  // cannot be traced
    return a + b.squeeze(0);
  }
  std::shared_ptr<Picky> picky;
};

class Outer : public TypedModule<Outer> {
 public:
  Outer() {
    inner = register_module("inner", std::make_shared<Inner>());
    head = register_module("head", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x) { return head(inner->call({x}).to_tensor()); }
  std::shared_ptr<Inner> inner;
  nn::Linear head{nullptr};
};

/// Makes the k-th recorded op throw (fault injection).
/// A RobustTracer whose `fail_at`-th recorded op throws (0: none; count() counts them). With
/// `through_layers`, built-in layers are traced through, so their ops are recorded too.
class FaultyTracer : public RobustTracer {
 public:
  explicit FaultyTracer(int fail_at, bool through_layers) : fail_at_(fail_at), through_layers_(through_layers) {}
  Value record_op(const OpCall& call) override {
    if (++count_ == fail_at_) throw std::runtime_error(fmt::format("injected fault in {}()", call.op.name()));
    return RobustTracer::record_op(call);
  }
  bool is_leaf_module(const Module& module, std::string_view path) const override {
    if (through_layers_ && module.is_builtin_layer()) return is_failed(module) || is_registered_leaf(module);
    return RobustTracer::is_leaf_module(module, path);
  }
  int count() const { return count_; }

 private:
  int fail_at_;
  bool through_layers_;
  int count_ = 0;
};

/// Three ways the ops of resnet18 are recorded: its layers as leaves that tell their output
/// shapes; its layers as leaves, the convolutions run on symbolic tensors for their output
/// shapes (H and W are unknown, so they cannot tell them without a run; see Note [Layer output
/// metadata]); or its layers traced through.
struct FaultMode {
  std::string what;
  bool through_layers;
  InputSpec spec;
  int min_ops;  // the ops a trace records at least
};
std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
    parts.push_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(path.substr(start));
  return parts;
}

/// The failures after the injected one: none when layers are leaves; traced through, the layers
/// whose forward then read the rank of a failed module's output, which nothing tells.
void check_consequences(const TraceRecords& records, const FaultMode& mode) {
  const std::vector<ModuleFailure>& failures = records.failures();
  if (!mode.through_layers) CHECK(failures.size() == 1);
  for (std::size_t i = 1; i < failures.size(); ++i) {
    CAPTURE(failures[i].message);
    CHECK(records.failed_modules()[i]->is_builtin_layer());
    CHECK(failures[i].kind == "TraceError");
    CHECK(failures[i].message.find("whose shape is unknown") != std::string::npos);
  }
}

std::vector<FaultMode> fault_modes() {
  return {{"layers as leaves", false, InputSpec(Shape{1, 3, 32, 32}), 8},
          {"layers as leaves, the convolutions run for their shapes", false,
           InputSpec(Shape{Dim(1), Dim(3), Dim::unknown(), Dim::unknown()}), 25},
          {"layers traced through", true, InputSpec(Shape{1, 3, 32, 32}), 60}};
}

}  // namespace

// RootReads traced on a [2, 4] input: the failed root alone, with its input.
constexpr const char* failed_root_graph_text = R"(graph():
    %x : float32[2, 4] [num_users=1] = placeholder[target=x]
    %root : float32[...] [num_users=1] = call_module[target=](args = (%x,), kwargs = {})
    return root
)";

TEST_CASE("a root whose own forward fails gives a graph with one call_module for the root") {
  RootReads model;
  RobustTracer tracer;
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 4})});
  CHECK(to_string(g) == failed_root_graph_text);
  CHECK(tracer.is_failed(model));
  CHECK(tracer.failure(model)->module == "");
  CHECK(tracer.failure_msg(model)->starts_with("TraceError: "));
  REQUIRE(g.find_node("root")->meta(meta_keys::failure) != nullptr);
  CHECK(*g.find_node("root")->meta(meta_keys::failure)->get_if<std::string>() == to_string(*tracer.failure(model)));
  CHECK_FALSE(tracer.is_unvisited(*model.fc));  // called before the failure
  const Tensor x = randn({2, 4});
  CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);
  // recursive_trace then traces the root's children.
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 4})});
  CHECK(c.size() == 2);
  REQUIRE(c.find("fc") != nullptr);
  CHECK(to_string(*c.find("fc")->find_node("x")->tensor_meta()) == "float32[2, 4]");
}

TEST_CASE("through a Tracer&, a RobustTracer is still robust: a failing root gives the failed-root graph") {
  RootReads model;
  auto records = std::make_shared<TraceRecords>();
  RobustTracer robust(records);
  Tracer& tracer = robust;  // Tracer::trace is the one entry; RobustTracer extends its steps
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 4})});
  CHECK(to_string(g) == failed_root_graph_text);
  REQUIRE(robust.is_failed(model));
  CHECK(robust.failure_msg(model)->starts_with("TraceError: "));
  // What the trace found is in the records the tracer was given.
  REQUIRE(records->failures().size() == 1);
  CHECK(records->failed_modules()[0] == &model);
  CHECK(&records->failures()[0] == robust.failure(model));
  CHECK(g.find_node("root")->meta(meta_keys::failure) != nullptr);
  CHECK_FALSE(tracer.is_tracing());  // and the thread's interposer is gone with the trace
  CHECK(current_interposer() == nullptr);
}

TEST_CASE("a failure nested in a failed module: both fail, the nested one is traced as a root later") {
  Outer model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{3, 4})});
  REQUIRE(c.failures().size() == 2);
  CHECK(c.failures()[0].module == "inner.bad");
  CHECK(c.failures()[0].kind == "std::runtime_error");
  CHECK(c.failures()[0].message == "library refused a float32[3, 4]");
  CHECK(c.failures()[1].module == "inner");
  CHECK(c.failures()[1].kind == "TraceError");
  // The model's graph has inner as a leaf (the leaf of inner.bad was rolled back with it).
  const Graph& root = *c.find("");
  CHECK(root.find_node("inner") != nullptr);
  CHECK(root.find_node("inner_bad") == nullptr);
  CHECK(to_string(*root.find_node("head")->tensor_meta()) == "float32[...]");
  // inner's children are traced as roots: fc normally, bad as a failed root.
  std::vector<std::string> traced;
  for (const GraphCollection::Entry& e : c) traced.push_back(e.path);
  CHECK(traced == std::vector<std::string>{"", "inner.fc", "inner.bad"});
  CHECK(to_string(*c.find("inner.bad")) == R"(graph():
    %x : float32[3, 4] [num_users=1] = placeholder[target=x]
    %root : float32[...] [num_users=1] = call_module[target=](args = (%x,), kwargs = {})
    return root
)");
  const Tensor x = randn({3, 4});
  CHECK_THROWS_WITH_AS(Interpreter(model, root).run({x}), doctest::Contains("library refused a float32[3, 4]"),
                       InterpreterError);  // the model itself throws: the graph runs it as it is
}

TEST_CASE("a shared module failing at its second call site only is a leaf at both, as when registered a leaf") {
  Shared model;
  RobustTracer tracer;
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 3})});
  CHECK(tracer.is_failed(*model.picky));
  CHECK(tracer.failure(*model.picky)->kind == "TraceError");
  CHECK(tracer.failure(*model.picky)->module == "picky");
  // The first call, traceable, is not inlined: both calls are leaves, as in a plain trace with
  // Picky registered a leaf (Note [A failure on a later call]), and a later trace says the same.
  CHECK(g.find_node("relu") == nullptr);
  CHECK(g.find_node("picky") != nullptr);
  CHECK(g.find_node("picky_1") != nullptr);
  Tracer plain;
  plain.register_leaf<Picky>(testing::result_by_running);
  CHECK(to_string(g) == to_string(plain.trace(model, {InputSpec(Shape{2, 3})})));
  CHECK(to_string(tracer.trace(model, {InputSpec(Shape{2, 3})})) == to_string(g));
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 3})});
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].module == "picky");
  CHECK(to_string(*c.find("")) == to_string(g));
  const Tensor x = randn({2, 3});
  CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);
}

TEST_CASE("a root that cannot be called as a whole, and a root that is a leaf, are not traced into") {
  auto list = std::make_shared<nn::ModuleListImpl>();
  list->push_back(nn::Linear(2, 2));
  RobustTracer tracer;
  const Graph g = tracer.trace(*list, {});
  CHECK(to_string(g) == R"(graph():
    %root : [num_users=1] = call_module[target=](args = (), kwargs = {})
    return root
)");
  CHECK(tracer.is_failed(*list));
  CHECK(tracer.failure_msg(*list) == "std::invalid_argument: ModuleList cannot be called as a whole: it has no forward");
  REQUIRE(g.find_node("root")->meta(meta_keys::failure) != nullptr);
  CHECK(*g.find_node("root")->meta(meta_keys::failure)->get_if<std::string>() == to_string(*tracer.failure(*list)));

  nn::Linear linear(4, 3);
  const Graph leaf = RobustTracer().trace(*linear.ptr(), {InputSpec(Shape{2, 4})});
  CHECK(to_string(leaf) == R"(graph():
    %x : float32[2, 4] [num_users=1] = placeholder[target=x]
    %root : float32[2, 3] [num_users=1] = call_module[target=](args = (%x,), kwargs = {})
    return root
)");
}

TEST_CASE("fault injection: whichever op throws, the graph lints, runs equal to eager, and no state leaks") {
  auto model = zoo::create("resnet18");
  model->eval();
  Generator gen(3);
  const Tensor x = randn({1, 3, 32, 32}, gen);
  const Tensor eager = model->call({x}).to_tensor();
  for (const FaultMode& mode : fault_modes()) {
    CAPTURE(mode.what);
    const InputSpec& spec = mode.spec;
    FaultyTracer counting(0, mode.through_layers);
    (void)counting.trace(*model, {spec});
    const int ops = counting.count();
    REQUIRE(ops > mode.min_ops);
    for (int k = 1; k <= ops; ++k) {
      CAPTURE(k);
      FaultyTracer tracer(k, mode.through_layers);
      const Graph g = tracer.trace(*model, {spec});
      REQUIRE_FALSE(tracer.failures().empty());
      CHECK(tracer.failures().front().message.starts_with("injected fault"));
      check_consequences(tracer.records(), mode);
      const Module* failed = tracer.records().failed_modules().front();
      const ModuleFailure& failure = tracer.failures().front();
      if (failed->is_builtin_layer()) {
        // A failed layer keeps its shape (its own shape function): its users are traced as usual.
        const Node* leaf = g.find_node(fmt::format("{}", fmt::join(split_path(failure.module), "_")));
        REQUIRE(leaf != nullptr);
        REQUIRE(leaf->tensor_meta() != nullptr);
        CHECK(leaf->tensor_meta()->shape.is_fully_known());
        CHECK(tracer.failures().size() == 1);
      }
      CHECK_NOTHROW(g.lint());
      CHECK(TracingState::current() == nullptr);
      CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), eager) <= 1e-5);
    }
  }
}

TEST_CASE("fault injection in recursive_trace: for every k, the collection lints, the model's graph runs equal to eager") {
  auto model = zoo::create("resnet18");
  model->eval();
  Generator gen(5);
  const Tensor x = randn({1, 3, 32, 32}, gen);
  const Tensor eager = model->call({x}).to_tensor();
  for (const FaultMode& mode : fault_modes()) {
    CAPTURE(mode.what);
    const InputSpec& spec = mode.spec;
    auto counting = std::make_unique<FaultyTracer>(0, mode.through_layers);
    FaultyTracer* counter = counting.get();
    GraphCollection clean(std::move(counting));
    clean.recursive_trace(*model, {spec});
    REQUIRE(clean.size() == 1);
    const int ops = counter->count();
    REQUIRE(ops > mode.min_ops);
    for (int k = 1; k <= ops; ++k) {
      CAPTURE(k);
      GraphCollection c(std::make_unique<FaultyTracer>(k, mode.through_layers));
      c.recursive_trace(*model, {spec});
      CHECK(TracingState::current() == nullptr);
      CHECK(current_interposer() == nullptr);
      // The innermost module whose forward made op k failed (and, traced through, the layers
      // that then met its output of unknown shape); the children of failed modules were traced.
      REQUIRE_FALSE(c.failures().empty());
      const ModuleFailure& f = c.failures().front();
      CHECK(f.kind == "std::runtime_error");
      CHECK(f.message.starts_with("injected fault in "));
      check_consequences(c.records(), mode);
      const ModuleHierarchy& h = c.hierarchy();
      CHECK(h.count(ModuleStatus::failed) == c.failures().size());
      std::set<std::size_t> children_of_failed;
      for (const ModuleFailure& failed : c.failures()) {
        CHECK(h[h.index_of(failed.module)].status == ModuleStatus::failed);
        for (std::size_t child : h.children(h.index_of(failed.module))) children_of_failed.insert(child);
      }
      CHECK(c.size() == 1 + children_of_failed.size());
      CHECK(h.count(ModuleStatus::unvisited) == 0);
      for (const GraphCollection::Entry& e : c) {
        CAPTURE(e.path);
        CHECK_NOTHROW(e.graph.lint());
        if (e.path.empty()) continue;
        // A child's graph is the one a fresh trace gives it on the inputs seen at its call.
        const std::vector<InputSpec>* seen = c.records().observed_inputs(*e.module);
        REQUIRE(seen != nullptr);
        CHECK(to_string(e.graph) == to_string(FaultyTracer(0, mode.through_layers).trace(*e.module, *seen)));
      }
      CHECK(max_rel_error(Interpreter(*model, *c.find("")).run({x}).to_tensor(), eager) <= 1e-5);
    }
  }
}

namespace {

/// Keeps a tensor made in a forward that then fails.
class Leaky : public TypedModule<Leaky> {
 public:
  Tensor forward(const Tensor& x) {
    cache = x.relu();
    throw std::runtime_error("late failure");
  }
  Tensor cache;
};

/// Uses the tensor its failed child kept.
class UsesCache : public TypedModule<UsesCache> {
 public:
  UsesCache() { leaky = register_module("leaky", std::make_shared<Leaky>()); }
  Tensor forward(const Tensor& x) {
    const Tensor y = leaky->call({x}).to_tensor();
    return y + leaky->cache;
  }
  std::shared_ptr<Leaky> leaky;
};

}  // namespace

TEST_CASE("a tensor made in a rolled-back forward is refused later, never read as the node that took its id") {
  UsesCache model;
  RobustTracer tracer;
  // Not run for its result: a run would leave a concrete tensor of its own in `cache`.
  tracer.set_result_by_execution(false);
  const Graph g = tracer.trace(model, {InputSpec(Shape{2})});
  REQUIRE(tracer.failures().size() == 2);
  CHECK(tracer.failures()[0].module == "leaky");
  CHECK(tracer.failures()[1].module == "");
  CHECK(tracer.failures()[1].message.find("a symbolic tensor of another trace was used") != std::string::npos);
  CHECK_NOTHROW(g.lint());
  CHECK(g.size() == 3);  // the root as one leaf
}

namespace {

/// A registered leaf after a failing module: its metadata function would index dims.
class Scale : public TypedModule<Scale> {
 public:
  Tensor forward(const Tensor& x) { return x * 2.0; }
};

class AfterFailure : public TypedModule<AfterFailure> {
 public:
  AfterFailure() {
    bad = register_module("bad", std::make_shared<Throws>());
    scale = register_module("scale", std::make_shared<Scale>());
  }
  Tensor forward(const Tensor& x) { return scale->call({bad->call({x}).to_tensor()}).to_tensor(); }
  std::shared_ptr<Throws> bad;
  std::shared_ptr<Scale> scale;
};

}  // namespace

TEST_CASE("a leaf's metadata function is not given arguments of unknown rank") {
  AfterFailure model;
  RobustTracer tracer;
  int calls = 0;
  tracer.register_leaf<Scale>([&calls](const Module&, const ValueList& args) {
    ++calls;
    const Shape& s = args.at(0).to_tensor().shape();
    return OutputMeta::single(DType::float32, Shape{s[0], s[1]});
  });
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 3})});
  CHECK(calls == 0);
  CHECK(to_string(*g.find_node("scale")->tensor_meta()) == "float32[...]");
  CHECK(tracer.is_failed(*model.bad));
  (void)tracer.trace(*model.scale, {InputSpec(Shape{2, 3})});
  CHECK(calls == 1);  // known shapes: the function runs
}

namespace {

/// A leaf whose registered metadata function throws (see the test below).
struct Leafy : TypedModule<Leafy> {
  Tensor forward(const Tensor& x) { return x.relu(); }
};
/// Calls the leaf twice.
struct CallsLeafy : TypedModule<CallsLeafy> {
  CallsLeafy() {
    leaf = register_module("leaf", std::make_shared<Leafy>());
    fc = register_module("fc", nn::Linear(4, 4));
  }
  static constexpr int call_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return leaf->call({fc(x)}).to_tensor() + leaf->call({x}).to_tensor(); }
  std::shared_ptr<Leafy> leaf;
  nn::Linear fc{nullptr};
};

}  // namespace

TEST_CASE("a leaf whose registered metadata function throws is a failed leaf of unknown shape, its caller traced on") {
  CallsLeafy model;
  GraphCollection c;
  c.tracer().register_leaf<Leafy>([](const Module&, const ValueList&) -> OutputMeta {
    throw std::runtime_error("assumed a 4-d input");
  });
  c.recursive_trace(model, {InputSpec(Shape{2, 4})});
  REQUIRE(c.failures().size() == 1);
  const ModuleFailure& f = c.failures()[0];
  CHECK(f.module == "leaf");
  CHECK(f.kind == "std::runtime_error");
  CHECK(f.message == "the output metadata function (LeafMetaFn) registered for the leaf 'leaf' (Leafy) failed, so its "
                     "output has an unknown shape: assumed a 4-d input");
  CHECK(f.where.line() == static_cast<std::uint_least32_t>(CallsLeafy::call_line));
  CHECK_FALSE(c.is_failed(model));  // the caller is traced: both calls are leaves of unknown shape
  const Graph& g = *c.find("");
  CHECK(to_string(*g.find_node("leaf")->tensor_meta()) == "float32[...]");
  CHECK(to_string(*g.find_node("leaf_1")->tensor_meta()) == "float32[...]");
  CHECK(g.find_node("add") != nullptr);
  const std::string report = coverage_report(c, "top");
  CHECK(report.find("leaf (Leafy)  failed: std::runtime_error at tests/robust/failure_patterns_test.cpp:") !=
        std::string::npos);
  CHECK(report.find("assumed a 4-d input") != std::string::npos);
  const Tensor x = randn({2, 4});
  CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);
}
