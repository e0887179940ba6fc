// RobustTracer on a module that is traced through on one call and fails on a later one (a
// module failing at its second call site only is in failure_patterns_test.cpp): every call of
// it becomes a leaf (Note [A failure on a later call] in robust_tracer.cpp), the graph is
// the plain trace with the module registered as a leaf, and the interpreter equals eager even
// when the module's result depends on how many times it was called.
#include "support/checks.hpp"
#include "support/result_by_running.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <string>

using namespace symtrace;
using testing::max_rel_error;

namespace {

/// Scales its input by the number of times it was called; reads data on call `fail_on`.
class Counted : public TypedModule<Counted> {
 public:
  static constexpr int data_branch_line = __LINE__ + 4;
  Tensor forward(const Tensor& x) {
    ++calls;
    const Tensor y = x * static_cast<double>(calls);
    if (calls == fail_on) return y.sum().to_bool() ? y : -y;
    return y;
  }
  int fail_on = 0;  // 0: never
  int calls = 0;
};

/// Counts how often its forward runs (how many passes a trace took).
class Probe : public TypedModule<Probe> {
 public:
  Tensor forward(const Tensor& x) {
    ++runs;
    return x.relu();
  }
  int runs = 0;
};

/// Calls `counted` three times in a loop, between two calls of a probe.
class Loop : public TypedModule<Loop> {
 public:
  Loop() {
    counted = register_module("counted", std::make_shared<Counted>());
    probe = register_module("probe", std::make_shared<Probe>());
    fc = register_module("fc", nn::Linear(4, 4));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = probe->call({fc(x)}).to_tensor();
    for (int i = 0; i < 3; ++i) h = counted->call({h}).to_tensor() + 1.0;
    return h;
  }
  std::shared_ptr<Counted> counted;
  std::shared_ptr<Probe> probe;
  nn::Linear fc{nullptr};
};

}  // namespace

TEST_CASE("a module failing on its first, second or last call is a leaf at every call, as when registered a leaf") {
  for (int fail_on : {1, 2, 3}) {
    CAPTURE(fail_on);
    Loop model;
    model.counted->fail_on = fail_on;
    RobustTracer robust;
    const Graph g = robust.trace(model, {InputSpec(Shape{2, 4})});
    CHECK_NOTHROW(g.lint());
    REQUIRE(robust.failures().size() == 1);
    const ModuleFailure& failure = robust.failures()[0];
    CHECK(failure.module == "counted");
    CHECK(failure.where.line() == static_cast<std::uint_least32_t>(Counted::data_branch_line));

    Tracer plain;
    plain.register_leaf<Counted>(testing::result_by_running);
    CHECK(to_string(g) == to_string(plain.trace(model, {InputSpec(Shape{2, 4})})));
    for (const char* leaf : {"counted", "counted_1", "counted_2"}) {
      const Node* node = g.find_node(leaf);
      REQUIRE(node != nullptr);
      CHECK(node->op() == OpKind::call_module);
      CHECK(node->target() == "counted");
    }

    // The module's result depends on how many times it was called: the graph runs it at each
    // call, as eager does.
    model.counted->fail_on = 0;
    const Tensor x = randn({2, 4});
    model.counted->calls = 0;
    const Tensor eager = model.call({x}).to_tensor();
    model.counted->calls = 0;
    CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), eager) <= 1e-6);
  }
}

TEST_CASE("a failure on a later call traces the model again; any other failure keeps one pass") {
  struct Case {
    int fail_on;
    int passes;  // how often the probe's forward ran: once per pass over the model
  };
  for (const Case c : {Case{0, 1}, Case{1, 1}, Case{2, 2}, Case{3, 2}}) {
    CAPTURE(c.fail_on);
    Loop model;
    model.counted->fail_on = c.fail_on;
    RobustTracer robust;
    const Graph g = robust.trace(model, {InputSpec(Shape{2, 4})});
    CHECK(model.probe->runs == c.passes);
    CHECK(robust.failures().size() == (c.fail_on == 0 ? 0u : 1u));
    CHECK((g.find_node("counted") != nullptr) == (c.fail_on != 0));
  }
}

TEST_CASE("a later-call failure inside a traced-through child restarts the root and keeps the child traced") {
  // The failing module is two levels down: its parent stays traced through, and its own
  // children (none here) would be traced as roots by recursive_trace.
  struct Holder : TypedModule<Holder> {
    Holder() { loop = register_module("loop", std::make_shared<Loop>()); }
    Tensor forward(const Tensor& x) { return loop->call({x}).to_tensor().tanh(); }
    std::shared_ptr<Loop> loop;
  };
  Holder model;
  model.loop->counted->fail_on = 2;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 4})});
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].module == "loop.counted");
  CHECK_FALSE(c.is_failed(*model.loop));
  const Graph& root = *c.find("");
  CHECK(root.find_node("loop_counted") != nullptr);
  CHECK(root.find_node("loop_counted_2") != nullptr);
  CHECK(root.find_node("tanh") != nullptr);
  CHECK(c.size() == 1);  // Counted has no children to trace as roots
}

TEST_CASE("a leaf that runs on one call and cannot on a later one is the failed module at every call") {
  // Counted registered as a leaf: its side run reads data on its second call (LeafForwardError),
  // after its first call was recorded as a plain leaf; the trace starts again with it failed.
  Loop model;
  model.counted->fail_on = 2;
  RobustTracer robust;
  robust.register_leaf<Counted>();
  const Graph g = robust.trace(model, {InputSpec(Shape{2, 4})});
  CHECK_NOTHROW(g.lint());
  REQUIRE(robust.failures().size() == 1);
  CHECK(robust.failures()[0].module == "counted");
  CHECK(robust.failures()[0].where.line() == static_cast<std::uint_least32_t>(Counted::data_branch_line));
  for (const char* leaf : {"counted", "counted_1", "counted_2"}) {
    CAPTURE(leaf);
    const Node* node = g.find_node(leaf);
    REQUIRE(node != nullptr);
    CHECK(node->target() == "counted");
    CHECK(node->meta(meta_keys::failure) != nullptr);  // each call the failed module's
  }
  CHECK(g.find_node("counted_3") == nullptr);
}
