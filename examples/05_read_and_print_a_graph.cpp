// Lesson 5: reading a graph node by node, and printing it three ways.
//
// A Graph is torch.fx's IR: nodes in an explicit (topological) order, each with an opcode, a
// unique name, a target, arguments that refer to earlier nodes, its users, and metadata: the
// result's dtype and shape, the file:line of the code that recorded it and the module scope
// it was recorded in. This lesson walks a traced graph as an analysis tool would, looks nodes
// up by name, prints it as fx's text, as fx's table and as Graphviz DOT, and runs a Boost.Graph
// algorithm on it through the opt-in BGL view. It checks what it reads against the model.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"
#include <symtrace/graph/bgl.hpp>  // opt-in: the only header that brings in Boost.Graph

#include <boost/graph/topological_sort.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <vector>

using namespace symtrace;
using namespace lesson;

namespace {

// The model of the README: (x + relu(fc(x))) * scale inside a block, then a head.
struct BlockImpl : TypedModule<BlockImpl> {
  BlockImpl() {
    fc = register_module("fc", nn::Linear(4, 4));
    act = register_module("act", nn::ReLU());
    scale = register_parameter("scale", ones({4}));
  }
  static constexpr int forward_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return (x + act(fc(x))) * scale; }
  nn::Linear fc{nullptr};
  nn::ReLU act{nullptr};
  Tensor scale;
};
SYMTRACE_MODULE(Block);

struct NetImpl : TypedModule<NetImpl> {
  NetImpl() : TypedModule({"features"}) {
    block = register_module("block", Block());
    head = register_module("head", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x) { return head(block(x)).relu(); }
  Block block{nullptr};
  nn::Linear head{nullptr};
};
SYMTRACE_MODULE(Net);

// An argument as the graph prints it: node references by name (`to_string(Argument)` alone
// prints them by id, `%3`, since an argument does not know its graph).
std::string arg_text(const Graph& g, const Argument& a) {
  if (const NodeId* id = a.get_if<NodeId>()) return "%" + g.node(*id).name();
  if (const ArgumentList* list = a.get_if<ArgumentList>()) {
    std::vector<std::string> items;
    for (const Argument& item : *list) items.push_back(arg_text(g, item));
    return fmt::format("[{}]", fmt::join(items, ", "));
  }
  return to_string(a);
}

std::vector<std::string> names(const std::vector<Node*>& nodes) {
  std::vector<std::string> out;
  for (const Node* n : nodes) out.push_back(n->name());
  return out;
}

}  // namespace

int main() {
  manual_seed(0);
  Net model;
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{2, 4})});

  // 1. Walk the nodes in order, reading everything a node carries.
  std::map<OpKind, int> per_op;
  for (const Node& n : g.nodes()) {
    ++per_op[n.op()];
    std::vector<std::string> args;
    for (const Argument& a : n.args()) args.push_back(arg_text(g, a));
    std::string_view file = n.where().file_name();
    file = file.substr(file.find_last_of('/') + 1);
    fmt::print("{:<13} {:<11} target={:<11} args=({}) users=[{}] meta={} at {}:{} scope='{}'\n", n.op(), n.name(),
               n.target(), fmt::join(args, ", "), fmt::join(names(n.users()), ", "),
               n.tensor_meta() ? to_string(*n.tensor_meta()) : "-", file, n.where().line(), n.scope());
  }
  expect(g.size() == 9, fmt::format("9 nodes, got {}", g.size()));
  expect(per_op[OpKind::placeholder] == 1 && per_op[OpKind::get_attr] == 1 && per_op[OpKind::call_module] == 3 &&
             per_op[OpKind::call_function] == 2 && per_op[OpKind::call_method] == 1 && per_op[OpKind::output] == 1,
         "node counts per opcode: 1 placeholder, 1 get_attr, 3 call_module, 2 call_function, 1 call_method, 1 output");

  // 2. Look nodes up by name (O(1)) and check what they say.
  const Node* add = g.find_node("add");
  const Node* features = g.find_node("features");
  if (add == nullptr || features == nullptr || g.find_node("no_such_node") != nullptr) {
    fmt::print(stderr, "MISMATCH: find_node: %add and %features exist, %no_such_node does not\n");
    return EXIT_FAILURE;
  }
  expect(names(add->input_nodes()) == std::vector<std::string>{"features", "block_act"}, "%add's inputs");
  expect(names(add->users()) == std::vector<std::string>{"mul"}, "%add's only user is %mul");
  expect(names(features->users()) == std::vector<std::string>{"block_fc", "add"}, "%features feeds fc and the add");
  expect(add->target() == "add" && add->scope() == "block", "%add: target add, recorded in scope 'block'");
  expect(std::string_view(add->where().file_name()).ends_with("05_read_and_print_a_graph.cpp") &&
             add->where().line() == BlockImpl::forward_line,
         "%add was recorded at Block::forward's line of this file");
  expect(add->tensor_meta() && add->tensor_meta()->dtype == DType::float32 && add->tensor_meta()->shape == Shape{2, 4},
         "%add is float32[2, 4]");
  const Node* scale = g.find_node("block_scale");
  expect(scale && scale->op() == OpKind::get_attr && scale->target() == "block.scale",
         "the parameter is read by get_attr[target=block.scale]");
  expect(g.output_node() != nullptr && names(g.output_node()->input_nodes()) == std::vector<std::string>{"relu"},
         "the output returns %relu");

  // 3. Three printed forms: fx's text, fx's print_tabular, Graphviz DOT (render: dot -Tsvg).
  fmt::print("\n{}\n{}", to_string(g), to_tabular(g));
  const std::string dot = to_dot(g, {.name = "net", .left_to_right = true});
  fmt::print("\nDOT: {} characters, starting {:?}\n", dot.size(), dot.substr(0, dot.find('\n')));
  std::size_t uses = 0, arrows = 0;
  for (const Node& n : g.nodes()) for_each_node(n.args(), n.kwargs(), [&](NodeId) { ++uses; });
  for (std::size_t at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 2)) ++arrows;
  expect(to_string(g).starts_with("graph():\n") && to_string(g).ends_with("    return relu\n"), "text form");
  expect(to_tabular(g).starts_with("opcode") && to_tabular(g).find("block_scale") != std::string::npos, "table");
  expect(dot.starts_with("digraph \"net\" {") && dot.find("rankdir=LR;") != std::string::npos, "DOT header");
  expect(arrows == uses && uses == 9, fmt::format("DOT has one edge per use: {} edges, {} uses", arrows, uses));

  // 4. The BGL view: Boost's topological_sort on the graph. It writes the reverse order.
  const bgl::View view = bgl::view(g);
  std::vector<bgl::Vertex> order;
  boost::topological_sort(view, std::back_inserter(order));
  std::reverse(order.begin(), order.end());
  std::vector<std::string> topo;
  for (bgl::Vertex v : order) topo.push_back(bgl::node(view, v).name());
  fmt::print("boost::topological_sort: {}\n", fmt::join(topo, " "));
  // Both orders must put every node after all of its inputs, and hold the same nodes.
  std::map<std::string, std::size_t> rank_topo, rank_graph;
  for (std::size_t i = 0; i < topo.size(); ++i) rank_topo[topo[i]] = i;
  for (const Node& n : g.nodes()) rank_graph.emplace(n.name(), rank_graph.size());
  expect(topo.size() == g.size() && rank_topo.size() == rank_graph.size(), "the sort lists every node once");
  for (const Node& n : g.nodes())
    for (const Node* in : n.input_nodes())
      expect(rank_topo[in->name()] < rank_topo[n.name()] && rank_graph[in->name()] < rank_graph[n.name()],
             fmt::format("%{} comes before its user %{} in both orders", in->name(), n.name()));

  fmt::print("{}\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output (line numbers depend on this file):
//   placeholder   features    target=features    args=() users=[block_fc, add] meta=float32[2, 4] at 05_...cpp:NN scope=''
//   call_module   block_fc    target=block.fc    args=(%features) users=[block_act] meta=float32[2, 4] at ... scope='block'
//   ...
//   output        output      target=output      args=(%relu) users=[] meta=- at ... scope=''
//
//   graph():
//       %features : float32[2, 4] [num_users=2] = placeholder[target=features]
//       ...
//   opcode         name         target       args                    kwargs  meta
//   ...
//   DOT: NNNN characters, starting "digraph \"net\" {"
//   boost::topological_sort: block_scale features block_fc block_act add mul head relu output
//   all checks passed
