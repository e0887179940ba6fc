// graph_erase_node: a node and the inputs only it consumed, depth first.
#include "symtrace/passes/erase_node.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/passes/dead_code.hpp"

#include <fmt/format.h>

#include <vector>

namespace symtrace {

std::size_t graph_erase_node(Graph& graph, Node& node, std::source_location where) {
  if (&node.graph() != &graph) {
    throw_invalid_argument(where, "graph_erase_node: %{} belongs to another graph; pass the graph that holds it",
                           node.name());
  }
  if (node.num_users() != 0) {
    std::vector<std::string> users;
    for (const Node* u : node.users()) users.push_back("%" + u->name());
    throw_invalid_argument(where, "graph_erase_node: %{} is still used by {}; replace its uses first",
                           node.name(), fmt::join(users, ", "));
  }
  std::size_t removed = 0;
  std::vector<Node*> pending{&node};
  while (!pending.empty()) {
    Node* n = pending.back();
    pending.pop_back();
    const std::vector<Node*> inputs = n->input_nodes();
    graph.erase_node(*n);
    ++removed;
    for (Node* input : inputs) {
      // Erasing n dropped it from the input's users: an input left unused goes too, unless
      // it is a graph input or has effects of its own.
      if (input->num_users() == 0 && !has_side_effects(*input)) pending.push_back(input);
    }
  }
  return removed;
}

}  // namespace symtrace
