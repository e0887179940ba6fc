#include "symtrace/interp/graph_module.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/interp/interpreter.hpp"
#include "symtrace/nn/state_dict.hpp"

#include <utility>
#include <vector>

namespace symtrace {

namespace {

std::shared_ptr<const ForwardSignature> signature_of(const Graph& graph) {
  auto signature = std::make_shared<ForwardSignature>();
  for (const Node& node : graph.nodes()) {
    if (node.op() != OpKind::placeholder) continue;
    signature->parameters.push_back(ForwardParameter{std::string(node.target()), ParamType::any, false, "Any"});
  }
  signature->num_required = signature->parameters.size();
  signature->result = ParamType::any;
  signature->result_type_name = "Any";
  return signature;
}

}  // namespace

GraphModule::GraphModule(const std::shared_ptr<Module>& root, Graph graph, std::string type_name, Where where)
    : Module(signature_of(graph)), graph_(std::move(graph)) {
  if (!root) throw_invalid_argument(where, "GraphModule: the root module is null");
  graph_.lint();
  set_type_name(std::move(type_name));
  for (const auto& [name, child] : root->named_children()) register_module(name, child, where);
  for (const NamedTensor& p : root->named_parameters(false)) register_parameter(p.name, p.tensor, where);
  const StateDict state = root->state_dict();  // persistent buffers are in it, the others not
  for (const NamedTensor& b : root->named_buffers(false)) {
    register_buffer(b.name, b.tensor, state.contains(b.name), where);
  }
  for (const Node& node : graph_.nodes()) {
    if (node.op() == OpKind::call_module) {
      (void)get_submodule(node.target(), where);
    } else if (node.op() == OpKind::get_attr && graph_.find_constant(node.target()) == nullptr &&
               graph_.find_subgraph(node.target()) == nullptr) {
      (void)get_tensor(node.target(), where);
    }
  }
}

Value GraphModule::forward_values(const ValueList& args) { return Interpreter(*this, graph_).run(args); }

}  // namespace symtrace
