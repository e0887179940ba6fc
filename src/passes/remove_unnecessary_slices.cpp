// remove_unnecessary_slices: a slice that keeps the whole tensor is its input.
#include "symtrace/passes/remove_unnecessary_slices.hpp"

#include "passes/pass_util.hpp"

#include <limits>
#include <optional>

namespace symtrace {

namespace {

/// True when `slice` (slice(x, dim, start, end, step)) selects all of x along dim.
bool keeps_everything(const Node& slice, const Node& input) {
  const Arguments& a = slice.args();
  if (a.size() != 5 || !slice.kwargs().empty()) return false;
  const std::optional<std::int64_t> dim = detail::int_arg(slice, 1);
  const std::optional<std::int64_t> step = detail::int_arg(slice, 4);
  if (!dim || step != 1) return false;
  const std::optional<std::int64_t> start = detail::int_arg(slice, 2);
  const std::optional<std::int64_t> end = detail::int_arg(slice, 3);
  if (!(a[2].is_none() || start == 0) || !(a[3].is_none() || end.has_value())) return false;
  if (a[3].is_none() || *end == std::numeric_limits<std::int64_t>::max()) return true;
  // A finite end keeps everything when it reaches the dim's size, which must be known.
  const TensorMeta* meta = input.tensor_meta();
  if (meta == nullptr || !meta->shape.is_rank_known()) return false;
  const auto rank = static_cast<std::int64_t>(meta->shape.rank());
  const std::int64_t d = *dim < 0 ? *dim + rank : *dim;
  if (d < 0 || d >= rank) return false;
  const Dim size = meta->shape[static_cast<std::size_t>(d)];
  return size.is_known() && *end >= size.value();
}

/// True when a user of `node` writes into it in place.
bool written_in_place(const Node& node) {
  for (const Node* user : node.users()) {
    const OpDef* op = detail::op_of(*user);
    if (op != nullptr && op->has(OpFlags::inplace) && user->arg_node(0) == &node) return true;
  }
  return false;
}

}  // namespace

std::size_t remove_unnecessary_slices(Graph& graph) {
  std::size_t removed = 0;
  for (Node* node = graph.nodes().empty() ? nullptr : &*graph.nodes().begin(); node != nullptr;) {
    Node* next = node->next();
    if ((node->op() == OpKind::call_function || node->op() == OpKind::call_method) && node->target() == "slice") {
      Node* input = node->arg_node(0);
      if (input != nullptr && keeps_everything(*node, *input) && !written_in_place(*node)) {
        graph.replace_all_uses_with(*node, *input);
        graph.erase_node(*node);
        ++removed;
      }
    }
    node = next;
  }
  return removed;
}

}  // namespace symtrace
