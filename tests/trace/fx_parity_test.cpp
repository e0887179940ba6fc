// Granularity parity with torch.fx: the zoo's resnet50, mobilenet_v2 and vit_b16 traced here
// have the call_module nodes (built-in layers as leaves) and get_attr nodes torch.fx gives
// the same architectures written in PyTorch (bench/fx/models.py), in the same order.
// tests/data/fx/*.txt hold fx's graphs, one `op<TAB>target` line per node, made by
// tools/fx-graph.
#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

using namespace symtrace;

namespace {

using OpTarget = std::pair<std::string, std::string>;

std::vector<OpTarget> read_fx_graph(const std::string& model) {
  const std::string path = fmt::format("{}/fx/{}.txt", SYMTRACE_TEST_DATA, model);
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  std::vector<OpTarget> nodes;
  for (std::string line; std::getline(in, line);) {
    const std::size_t tab = line.find('\t');
    REQUIRE_MESSAGE(tab != std::string::npos, "malformed line in ", path, ": ", line);
    nodes.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return nodes;
}

/// The targets of the nodes of kind `op`, in order.
std::vector<std::string> targets(const std::vector<OpTarget>& nodes, std::string_view op) {
  std::vector<std::string> out;
  for (const auto& [o, t] : nodes)
    if (o == op) out.push_back(t);
  return out;
}

std::vector<OpTarget> nodes_of(const Graph& g) {
  std::vector<OpTarget> out;
  for (const Node& node : g.nodes()) out.emplace_back(to_string(node.op()), std::string(node.target()));
  return out;
}

}  // namespace

TEST_CASE("resnet50, mobilenet_v2 and vit_b16 have torch.fx's call_module and get_attr nodes") {
  for (std::string name : {"resnet50", "mobilenet_v2", "vit_b16"}) {
    CAPTURE(name);
    const std::vector<OpTarget> fx = read_fx_graph(name);
    auto model = zoo::create(name);
    model->eval();
    const Graph g = symbolic_trace(*model, {InputSpec(Shape{1, 3, 224, 224})});
    const std::vector<OpTarget> ours = nodes_of(g);
    CHECK(targets(ours, "call_module") == targets(fx, "call_module"));
    CHECK(targets(ours, "get_attr") == targets(fx, "get_attr"));
    CHECK(targets(ours, "placeholder") == targets(fx, "placeholder"));
    // fx records every x.size(i) (it knows no shapes); with example shapes these are plain
    // numbers here, and every other node has its counterpart.
    const std::size_t fx_sizes = std::count(fx.begin(), fx.end(), OpTarget{"call_method", "size"});
    CHECK(ours.size() + fx_sizes == fx.size());
  }
  CHECK(read_fx_graph("resnet50").size() == 177);
  CHECK(read_fx_graph("vit_b16").size() == 302);
}
