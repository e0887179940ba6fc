// Interpreter hooks (torch.fx's): a subclass sees every node through run_node and the hook of
// its op, with the values the node runs on.
#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"
#include "support/checks.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

using namespace symtrace;

namespace {

/// Collects the mean and the number of calls of every module's output, as a user measuring
/// activation statistics would.
class ActivationStats : public Interpreter {
 public:
  using Interpreter::Interpreter;
  struct Stat {
    double mean = 0;
    int calls = 0;
  };
  std::map<std::string, Stat> stats;
  std::map<OpKind, int> nodes_run;

  Value run_node(const Node& node) override {
    ++nodes_run[node.op()];
    return Interpreter::run_node(node);
  }

  Value call_module(std::string_view target, ValueList args, KeywordValues kwargs) override {
    REQUIRE(current_node() != nullptr);
    CHECK(current_node()->target() == target);
    Value out = Interpreter::call_module(target, std::move(args), std::move(kwargs));
    Stat& s = stats[std::string(target)];
    s.mean = out.to_tensor().mean().item<float>();
    ++s.calls;
    return out;
  }
};

}  // namespace

TEST_CASE("an Interpreter subclass collects per-module activation statistics of resnet18") {
  auto model = zoo::create("resnet18");
  model->eval();
  const Tensor x = randn({1, 3, 64, 64});
  const Graph g = symbolic_trace(*model, {x});
  ActivationStats stats(*model, g);
  const Tensor out = stats.run({x}).to_tensor();

  SUBCASE("the run still gives the eager result") {
    CHECK(testing::max_rel_error(out, model->call({x}).to_tensor()) <= 1e-5);
  }
  SUBCASE("every call_module node is seen once, with the output its module gives") {
    std::map<std::string, int> calls;
    std::map<OpKind, int> kinds;
    for (const Node& node : g.nodes()) {
      ++kinds[node.op()];
      if (node.op() == OpKind::call_module) ++calls[std::string(node.target())];
    }
    CHECK(stats.nodes_run == kinds);
    REQUIRE(stats.stats.size() == calls.size());
    for (const auto& [target, n] : calls) {
      CAPTURE(target);
      CHECK(stats.stats.at(target).calls == n);
    }
    // The stem's convolution sees the input itself; the classifier gives the model's output.
    const Tensor conv1 = model->get_submodule("conv1").call({x}).to_tensor();
    CHECK(stats.stats.at("conv1").mean == doctest::Approx(conv1.mean().item<float>()).epsilon(1e-6));
    CHECK(stats.stats.at("fc").mean == doctest::Approx(out.mean().item<float>()).epsilon(1e-6));
    CHECK(stats.stats.at("layer4.1.bn2").calls == 1);
  }
}

TEST_CASE("outside a run there is no current node; inside one a second run of the same interpreter is refused") {
  class Nested : public Interpreter {
   public:
    using Interpreter::Interpreter;
    Value call_module(std::string_view target, ValueList args, KeywordValues kwargs) override {
      CHECK_THROWS_WITH_AS((void)run({args.at(0)}),
                           "Interpreter::run: this interpreter is already running; use another one for a nested run",
                           std::logic_error);
      return Interpreter::call_module(target, std::move(args), std::move(kwargs));
    }
  };
  auto model = zoo::create("resnet18");
  model->eval();
  const Tensor x = randn({1, 3, 32, 32});
  const Graph g = symbolic_trace(*model, {x});
  Nested interpreter(*model, g);
  CHECK(interpreter.current_node() == nullptr);
  const Tensor out = interpreter.run({x}).to_tensor();
  CHECK(interpreter.current_node() == nullptr);
  CHECK(testing::max_rel_error(out, model->call({x}).to_tensor()) <= 1e-5);
  // After a failed run too, and the interpreter runs again.
  CHECK_THROWS_AS((void)interpreter.run({randn({1, 4, 32, 32})}), std::invalid_argument);
  CHECK(interpreter.current_node() == nullptr);
  CHECK(testing::max_rel_error(interpreter.run({x}).to_tensor(), out) == 0);
}

TEST_CASE("an exception in a hook names the node being run; a TraceError passes unchanged") {
  class Failing : public Interpreter {
   public:
    using Interpreter::Interpreter;
    Value call_function(std::string_view target, ValueList args, KeywordValues kwargs) override {
      if (target == "add") throw std::runtime_error("no adds today");
      return Interpreter::call_function(target, std::move(args), std::move(kwargs));
    }
  };
  auto model = zoo::create("resnet18");
  const Tensor x = randn({1, 3, 32, 32});
  const Graph g = symbolic_trace(*model, {x});
  Failing interpreter(*model, g);
  CHECK_THROWS_WITH_AS((void)interpreter.run({x}), doctest::Contains("no adds today\nWhile executing %add : "),
                       InterpreterError);
}
