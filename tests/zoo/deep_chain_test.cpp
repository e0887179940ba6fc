// deep_chain_1000: modules nested 1,000 deep, the innermost failing to trace.

#include "support/checks.hpp"

#include <symtrace/zoo/deep_chain.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <fmt/format.h>

#include <string>

using namespace symtrace;

TEST_CASE("deep_chain_1000 traces through 999 links and reports its innermost module at the data-dependent branch") {
  manual_seed(0);
  const zoo::ModelInfo& info = zoo::info("deep_chain_1000");
  const auto model = zoo::create("deep_chain_1000");
  REQUIRE(info.untraceable.size() == 1);
  CHECK(info.untraceable[0].size() == 999 * 6 - 1);  // "inner" 999 times
  CHECK(model->num_parameters() == info.parameters);
  CHECK(model->get_submodule(info.untraceable[0]).type_name() == "ChainEnd");

  const Tensor x = randn({2, 16});
  const GraphCollection c = recursive_trace(*model, {InputSpec(x)});
  REQUIRE(c.failures().size() == 1);
  const ModuleFailure& failure = c.failures()[0];
  CHECK(failure.module == info.untraceable[0]);
  CHECK(failure.kind == "TraceError");
  CHECK(failure.where.line() == static_cast<unsigned>(zoo::ChainEndImpl::data_branch_line));
  const Graph& graph = c.at(*model);
  graph.lint();
  CHECK(graph.size() == 1 + 3 * 999 + 1 + 1);  // x; relu, add, mul per link; the end; the output
  CHECK(testing::max_abs_diff(Interpreter(*model, graph).run({x}).to_tensor(), model->call({x}).to_tensor()) <= 1e-5);

  // Nodes keep their module's path as their scope, however deep.
  std::string deepest;
  for (const Node& node : graph.nodes()) {
    if (node.scope().size() > deepest.size()) deepest = std::string(node.scope());
  }
  CHECK(deepest == info.untraceable[0].substr(0, info.untraceable[0].size() - 6));  // the last link's

  // The module tree indents 32 levels at most, then gives the depth.
  const std::string report = coverage_report(c, "deep_chain_1000");
  CHECK(report.find("  modules: 1001 (999 traced, 1 leaf, 1 failed, 0 unvisited)\n") != std::string::npos);
  CHECK(report.find("\n" + std::string(31 * 4, ' ') + "└── inner (ChainLink)  traced\n") != std::string::npos);
  CHECK(report.find("\n" + std::string(31 * 4, ' ') + "[33] └── inner (ChainLink)  traced\n") != std::string::npos);
  CHECK(report.find("\n" + std::string(31 * 4, ' ') + "[999] └── inner (ChainEnd)  failed: TraceError at ") !=
        std::string::npos);
  CHECK(report.find("\n" + std::string(31 * 4, ' ') + "[1000] └── fc (Linear)  leaf  [graph: 3 nodes]\n") !=
        std::string::npos);
  CHECK(report.find("\nfailures (1)\n  " + info.untraceable[0] + " (ChainEnd) at ") != std::string::npos);
}

TEST_CASE("deep_chain refuses a chain of fewer than two modules") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)zoo::deep_chain(1),
                       fmt::format("{}:{}: deep_chain(n=1, width=16): a chain has n >= 2 modules (links around an end) "
                                   "and width >= 1",
                                   __FILE__, line)
                           .c_str(),
                       std::invalid_argument);
}
