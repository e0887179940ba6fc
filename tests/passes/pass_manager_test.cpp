// PassManager: passes in order with what each changed, a malformed result caught by the lint
// after the pass that made it, and a failing pass stopping the run. On the zoo, every pass
// leaves what the interpreter computes unchanged.
#include "support/zoo_checks.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

using namespace symtrace;

namespace {

/// The passes of this layer, in the order an exporter would run them.
PassManager all_passes() {
  PassManager pm;
  pm.add("remove_inplace", [](Graph& g) { return remove_inplace(g); })
      .add("remove_unnecessary_slices", remove_unnecessary_slices)
      .add("cse", eliminate_common_subexpressions)
      .add("dead_code", static_cast<std::size_t (*)(Graph&)>(eliminate_dead_code));
  return pm;
}

Graph duplicated() {
  Graph g;
  Node& x = g.placeholder("x");
  Node& a = g.call_function("exp", {x});
  Node& b = g.call_function("exp", {x});
  g.call_function("neg", {a});  // dead
  g.output(g.call_function("add", {a, b}));
  return g;
}

}  // namespace

TEST_CASE("a pass manager runs its passes in order and says what each changed") {
  Graph g = duplicated();
  const PassManager pm = all_passes();
  CHECK(pm.names() == std::vector<std::string>{"remove_inplace", "remove_unnecessary_slices", "cse", "dead_code"});
  CHECK(pm.run(g) == std::vector<PassResult>{{"remove_inplace", 0}, {"remove_unnecessary_slices", 0}, {"cse", 1}, {"dead_code", 1}});
  CHECK(to_string(g) ==
        "graph():\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    %exp : [num_users=1] = call_function[target=exp](args = (%x,), kwargs = {})\n"
        "    %add : [num_users=1] = call_function[target=add](args = (%exp, %exp), kwargs = {})\n"
        "    return add\n");
}

TEST_CASE("the lint after each pass names the pass that left a malformed graph") {
  Graph g = duplicated();
  PassManager pm;
  pm.add("misorder", [](Graph& graph) {
      graph.move_after(*graph.find_node("exp"), *graph.find_node("add"));  // after its user
      return std::size_t{1};
    }).add("never", [](Graph&) -> std::size_t { FAIL("a pass after a failed one ran"); return 0; })
      .lint_after_each(true);
  CHECK_THROWS_WITH_AS(pm.run(g), doctest::Contains("the pass 'misorder' left a malformed graph: "), LintError);
  PassManager quiet;
  quiet.add("misorder", [](Graph& graph) {
    graph.move_after(*graph.find_node("exp_1"), *graph.find_node("add"));
    return std::size_t{1};
  });
  quiet.lint_after_each(false);
  Graph h = duplicated();
  CHECK(quiet.run(h).size() == 1);
  CHECK_THROWS_AS(h.lint(), LintError);
}

TEST_CASE("a pass manager lints after each pass by default when symtrace is built without NDEBUG") {
  // The library decides (src/passes/pass_manager.cpp); this file is built with the same NDEBUG.
#ifdef NDEBUG
  CHECK_FALSE(PassManager().lints_after_each());
#else
  CHECK(PassManager().lints_after_each());
#endif
  CHECK_FALSE(PassManager().lint_after_each(false).lints_after_each());
  CHECK(PassManager().lint_after_each(true).lints_after_each());
}

TEST_CASE("a pass manager refuses an empty pass and a name given twice") {
  PassManager pm;
  CHECK_THROWS_WITH_AS(pm.add("x", GraphPass()), doctest::Contains("PassManager::add: the pass 'x' is empty"),
                       std::invalid_argument);
  pm.add("cse", eliminate_common_subexpressions);
  CHECK_THROWS_WITH_AS(pm.add("cse", eliminate_common_subexpressions),
                       doctest::Contains("PassManager::add: a pass is already called 'cse'"), std::invalid_argument);
  CHECK(pm.names() == std::vector<std::string>{"cse"});
}

TEST_CASE("every pass leaves the interpreter's result on zoo models unchanged") {
  struct Case {
    std::string model;
    Shape input;
  };
  for (const Case& c : {Case{"resnet18", Shape{1, 3, 32, 32}}, Case{"mobilenet_v2", Shape{1, 3, 32, 32}},
                        Case{"unet_small", Shape{1, 3, 64, 64}}, Case{"vit_tiny", Shape{1, 3, 224, 224}},
                        Case{"deep_mlp_100", Shape{2, 64}}}) {
    CAPTURE(c.model);
    manual_seed(0);
    const auto model = zoo::create(c.model);
    const Tensor x = randn(c.input.sizes());
    const Tensor eager = testing::run(*model, x);
    Graph g = testing::trace_and_lint(*model, InputSpec(c.input));
    const std::size_t before = g.size();
    const std::vector<PassResult> results = all_passes().lint_after_each(true).run(g);
    std::size_t changes = 0;
    for (const PassResult& r : results) changes += r.changes;
    CHECK(g.size() <= before);
    CHECK_NOTHROW(g.lint());
    testing::check_graph_runs_equal_to_eager(*model, g, x, eager);
    INFO("changes: " << changes);
  }
}

TEST_CASE("the passes run on the root graph of a robust trace, failed modules left as leaves") {
  manual_seed(0);
  const auto model = zoo::create("mixed_failures");
  const Tensor x = randn({1, 3, 32, 32});
  const Tensor eager = testing::run(*model, x);
  const GraphCollection c = recursive_trace(*model, {InputSpec(Shape{1, 3, 32, 32})});
  Graph g = c.at(*model);
  (void)all_passes().lint_after_each(true).run(g);
  testing::check_graph_runs_equal_to_eager(*model, g, x, eager);
}
