// Dead code elimination: one backward pass over the order, the registry consulted for effects.
#include "symtrace/passes/dead_code.hpp"

#include "passes/pass_util.hpp"

namespace symtrace {

bool has_side_effects(const Node& node) noexcept {
  if (node.is_impure()) return true;
  const OpDef* op = detail::op_of(node);
  return op != nullptr && (op->has(OpFlags::inplace) || op->has(OpFlags::random) || op->has(OpFlags::mutates_arguments));
}

std::size_t eliminate_dead_code(Graph& graph) {
  std::size_t removed = 0;
  Node* node = graph.output_node();
  if (node == nullptr && !graph.empty()) {
    for (Node& n : graph.nodes()) node = &n;  // the last node
  }
  while (node != nullptr) {
    Node* prev = node->prev();
    if (node->num_users() == 0 && !has_side_effects(*node)) {
      graph.erase_node(*node);
      ++removed;
    }
    node = prev;
  }
  return removed;
}

}  // namespace symtrace
