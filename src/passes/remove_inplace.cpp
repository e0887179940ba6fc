// remove_inplace: each in-place node becomes the functional op that computes what it leaves in
// its first argument, and every later use of that argument (and of the tensor it is a slice
// of, through slice_scatter) reads the new value.
//
// Note [In-place rewrite and aliasing]: the graph's order is its execution order, so "later"
// is "after the in-place node in the order". Writing into `a` changes every tensor sharing
// storage with it: the root it is a view of and the root's other views. The rewrite redirects
// later uses of `a` (and, when `a` is one slice of the root, of the root via slice_scatter);
// any other alias made before the write and read after it would silently miss the change, so
// the pass refuses instead. Views made after the write are made from the redirected value.
#include "symtrace/passes/remove_inplace.hpp"

#include "passes/pass_util.hpp"
#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace {

namespace {

/// Ops whose result may share storage with their first argument: the registry's views, and
/// those that return their input or a view of it when they can (reshape, flatten, contiguous,
/// to a dtype the tensor already has).
bool may_alias(const Node& node) {
  const OpDef* op = detail::op_of(node);
  if (op == nullptr) return false;
  if (op->has(OpFlags::view)) return true;
  const std::string_view t = node.target();
  return t == "reshape" || t == "flatten" || t == "contiguous" || t == "to";
}

class Rewriter {
 public:
  Rewriter(Graph& graph, std::source_location where) : graph_(graph), where_(where) {
    double i = 0;
    for (const Node& n : graph.nodes()) pos_.emplace(&n, i++);
  }

  void rewrite(Node& n);

 private:
  double pos(const Node& n) const { return pos_.at(&n); }

  /// `n` described for a message: `%add_ (add_ at model.cpp:12)`.
  static std::string describe(const Node& n) {
    if (n.where().line() == 0) return fmt::format("%{} ({})", n.name(), n.target());
    return fmt::format("%{} ({} at {}:{})", n.name(), n.target(), n.where().file_name(), n.where().line());
  }

  template <class... A>
  [[noreturn]] void refuse(const Node& n, fmt::format_string<A...> why, A&&... args) const {
    throw_invalid_argument(where_, "remove_inplace: {} {}", describe(n), fmt::format(why, std::forward<A>(args)...));
  }

  bool used_after(const Node& v, double p) const {
    for (const Node* u : v.users()) {
      if (pos(*u) > p) return true;
    }
    return false;
  }

  /// Makes the uses of `from` that come after position `p` use `to`.
  void redirect_later_uses(Node& from, Node& to, double p) {
    for (Node* u : from.users()) {
      if (u != &to && pos(*u) > p) u->replace_input_with(from, to);
    }
  }

  /// A new node right before `anchor`, positioned after the nodes made before it.
  Node& insert(Node& anchor, OpKind op, std::string_view target, Arguments args, std::optional<TensorMeta> meta) {
    Node* node = nullptr;
    {
      auto at = graph_.inserting_before(anchor);
      node = &graph_.create_node(op, target, std::move(args), {}, {}, anchor.where());
    }
    node->set_tensor_meta(std::move(meta));
    node->set_scope(anchor.scope());
    next_offset_ += 1e-3;
    pos_.emplace(node, pos(anchor) - 0.5 + next_offset_);
    return *node;
  }

  /// The node holding the value `n` leaves in its first argument `a`, made before `n`.
  Node& functional_value(Node& n, Node& a);

  Graph& graph_;
  std::source_location where_;
  std::unordered_map<const Node*, double> pos_;
  double next_offset_ = 0;
};

Node& Rewriter::functional_value(Node& n, Node& a) {
  const std::string_view t = n.target();
  const TensorMeta* meta = n.tensor_meta() ? n.tensor_meta() : a.tensor_meta();
  const std::optional<TensorMeta> result = meta ? std::optional<TensorMeta>(*meta) : std::nullopt;
  const OpDef* inplace = detail::op_of(n);
  const OpDef* functional =
      inplace != nullptr && t != "fill_" && t != "copy_" ? OpRegistry::instance().functional_of(*inplace) : nullptr;
  if (functional != nullptr) {
    // The in-place op casts its result back to the tensor's dtype; the functional op would not.
    if (meta != nullptr && !is_floating(meta->dtype)) {
      for (std::size_t i = 1; i < n.args().size(); ++i) {
        const Argument& other = n.args()[i];
        const Node* o = n.arg_node(i);
        const bool float_operand = other.get_if<double>() != nullptr ||
                                   (o != nullptr && o->tensor_meta() != nullptr && is_floating(o->tensor_meta()->dtype));
        if (float_operand) {
          refuse(n, "writes a floating-point result into an integer tensor ({}), which {} would not keep; cast the "
                    "operand to {} first",
                 meta->dtype, functional->name(), meta->dtype);
        }
      }
    }
    Node& f = insert(n, n.op(), functional->name(), n.args(), result);
    f.set_kwargs(n.kwargs());
    return f;
  }
  if (t == "fill_" || t == "copy_") {
    if (meta == nullptr || !meta->shape.is_rank_known()) {
      refuse(n, "writes into a tensor whose shape is unknown, so its functional form cannot be built; trace with "
                "input shapes");
    }
    if (t == "fill_") {
      if (!meta->shape.is_fully_known() || n.args().size() != 2) {
        refuse(n, "writes into a tensor of shape {} with unknown sizes, so `full` cannot make it; trace with input "
                  "shapes",
               to_string(*meta));
      }
      ArgumentList sizes;
      for (std::int64_t s : meta->shape.sizes()) sizes.emplace_back(s);
      return insert(n, OpKind::call_function, "full", {Argument(std::move(sizes)), n.args()[1], Argument(meta->dtype)},
                    result);
    }
    Node* src = n.arg_node(1);
    if (src == nullptr || src->tensor_meta() == nullptr) {
      refuse(n, "copies a value whose dtype and shape are unknown; trace with input shapes");
    }
    Node* value = src;
    if (src->tensor_meta()->dtype != meta->dtype) {
      TensorMeta cast{meta->dtype, src->tensor_meta()->shape};
      value = &insert(n, OpKind::call_function, "to", {Argument(*value), Argument(meta->dtype)}, cast);
    }
    if (!(src->tensor_meta()->shape == meta->shape)) {
      if (!meta->shape.is_fully_known()) {
        refuse(n, "copies a {} value into {}, and the broadcast to unknown sizes cannot be written; trace with "
                  "input shapes",
               to_string(*src->tensor_meta()), to_string(*meta));
      }
      ArgumentList sizes;
      for (std::int64_t s : meta->shape.sizes()) sizes.emplace_back(s);
      value = &insert(n, OpKind::call_function, "expand", {Argument(*value), Argument(std::move(sizes))}, result);
    }
    return *value;
  }
  refuse(n, "is an in-place op whose functional form the op registry does not have (an op of the same name without "
            "the trailing _, taking the same arguments)");
}

void Rewriter::rewrite(Node& n) {
  Node* a = n.arg_node(0);
  if (a == nullptr) refuse(n, "does not write into a node of the graph (its first argument is not a node)");
  // The chain of views from a back to the tensor that owns the storage.
  Node* root = a;
  std::size_t depth = 0;
  while (may_alias(*root) && root->arg_node(0) != nullptr) {
    root = root->arg_node(0);
    ++depth;
  }
  const std::string through = root == a ? std::string() : fmt::format(" through the view %{} of it", a->name());
  if (root->op() == OpKind::placeholder) {
    refuse(n, "writes into the graph input %{}{}: the caller sees that change after the graph runs, which a "
              "functional graph cannot express; write into a copy instead (e.g. x.add(y) rather than x.add_(y))",
           root->name(), through);
  }
  if (root->op() == OpKind::get_attr) {
    refuse(n, "writes into '{}' (get_attr){}: a parameter or buffer keeps the change after the graph runs, which "
              "a functional graph cannot express",
           root->target(), through);
  }
  const bool scatter = depth == 1 && a->target() == "slice" && a->args().size() == 5;
  // Every alias of the root made before the write and read after it must be one the rewrite
  // redirects (Note [In-place rewrite and aliasing]).
  const double p = pos(n);
  std::vector<Node*> aliases{root};
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    for (Node* u : aliases[i]->users()) {
      if (may_alias(*u) && u->arg_node(0) == aliases[i] && pos(*u) < p) aliases.push_back(u);
    }
  }
  for (Node* v : aliases) {
    if (v == a || (scatter && v == root) || !used_after(*v, p)) continue;
    if (v == root) {
      refuse(n, "writes into %{} through %{} ({}), and %{} is used after the write: only a write into one slice "
                "can be carried back (slice_scatter); write into %{} itself or use the functional op",
             root->name(), a->name(), a->target(), root->name(), root->name());
    }
    refuse(n, "writes into %{}, and %{} ({}), another view of %{} made before the write, is used after it and "
              "would miss the change; make the view after the write",
           a->name(), v->name(), v->target(), root->name());
  }

  Node& f = functional_value(n, *a);
  if (scatter) {
    Arguments args{Argument(*root), Argument(f), a->args()[1], a->args()[2], a->args()[3], a->args()[4]};
    const std::optional<TensorMeta> meta =
        root->tensor_meta() ? std::optional<TensorMeta>(*root->tensor_meta()) : std::nullopt;
    Node& s = insert(n, OpKind::call_function, "slice_scatter", std::move(args), meta);
    redirect_later_uses(*root, s, p);
  }
  redirect_later_uses(*a, f, p);
  graph_.replace_all_uses_with(n, f);
  graph_.erase_node(n);
}

}  // namespace

std::size_t remove_inplace(Graph& graph, std::source_location where) {
  std::vector<Node*> inplace;
  for (Node& n : graph.nodes()) {
    const OpDef* op = detail::op_of(n);
    if ((op != nullptr && op->has(OpFlags::inplace)) ||
        ((n.op() == OpKind::call_function || n.op() == OpKind::call_method) && n.is_impure() &&
         n.target().ends_with("_"))) {
      inplace.push_back(&n);
    }
  }
  if (inplace.empty()) return 0;
  Graph::Checkpoint checkpoint = graph.checkpoint();  // a refusal leaves the graph as it was
  Rewriter rewriter(graph, where);
  for (Node* n : inplace) rewriter.rewrite(*n);
  checkpoint.commit();
  return inplace.size();
}

}  // namespace symtrace
