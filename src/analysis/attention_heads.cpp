// Attention heads as channel groups.
//
// nn::MultiheadAttention computes each head on its own: rows [h*d, (h+1)*d) of the query, key
// and value projections make head h's scores, softmax and weighted values, and columns
// [h*d, (h+1)*d) of the output projection read them. Removing whole heads therefore leaves
// what the other heads compute unchanged (the scale 1/sqrt(d) stays, d does not change), and
// the layer's output is what it was with those columns of the output projection zeroed: the
// exactness the other groups have. The graph analysis cannot see this (the heads live in a
// reshape that merges them with the batch), so the layer's semantics give the group, as a
// depthwise convolution's do.
//
// It holds only where nothing outside the layer sees the heads: the attention weights
// (need_weights) must not be used outside it, and no per-head mask (3-D or 4-D attn_mask) may
// come in. Both are read from the graph that traced the layer through: the nodes in its scope.

#include "analysis/attention_heads.hpp"

#include "symtrace/graph/graph.hpp"
#include "symtrace/nn/attention.hpp"
#include "symtrace/nn/module.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace symtrace::detail {

namespace {

bool in_scope(std::string_view scope, std::string_view path) {
  return scope == path || (scope.size() > path.size() && scope.starts_with(path) && scope[path.size()] == '.');
}

/// Why cutting the heads of the layer at `path` (relative to `graph`) would change what the
/// graph computes, or "" when it would not; nullopt when the graph did not trace the layer.
std::optional<std::string> heads_seen_outside(const Graph& graph, const std::string& path) {
  const std::string out_weight = path + ".out_proj.weight";
  bool traced = false;
  for (const Node& n : graph.nodes()) {
    if (n.op() == OpKind::get_attr && n.target().starts_with(path + ".")) {
      // The layer's own projections, read by nothing else (a tied weight would be cut too).
      for (const Node* user : n.users()) {
        if (!in_scope(user->scope(), path)) return fmt::format("'{}' is used outside '{}' by {}", n.target(), path, user->name());
      }
      continue;
    }
    if (!in_scope(n.scope(), path) || n.op() == OpKind::get_attr) continue;
    traced = true;
    // What comes in (computed outside, or a constant): the query, key and value, which go to
    // the projections (through the views that give them the [L, N, E] layout), and masks of at
    // most two dims; a mask of more dims is one per head.
    for (const Node* in : n.input_nodes()) {
      const bool own = in->op() == OpKind::get_attr ? in->target().starts_with(path + ".") : in_scope(in->scope(), path);
      if (own || in->meta(meta_keys::type) != nullptr) continue;  // the layer's own, or a size
      const TensorMeta* m = in->tensor_meta();
      if (m == nullptr || !m->shape.is_rank_known()) return fmt::format("an input of unknown shape reaches '{}'", path);
      const bool projected = n.target() == "linear" || n.target() == "transpose" || n.target() == "unsqueeze";
      if (m->shape.rank() > 2 && !projected) {
        return fmt::format("a mask per head ({}) reaches '{}'", to_string(m->shape), path);
      }
    }
    // What goes out: the output projection's result (through the views that undo the batch
    // layout), never the attention weights.
    for (const Node* user : n.users()) {
      if (in_scope(user->scope(), path)) continue;
      const Node* from = &n;
      while (from != nullptr && !(from->target() == "linear" && from->arg_node(1) != nullptr &&
                                  from->arg_node(1)->target() == out_weight)) {
        from = from->input_nodes().size() == 1 || from->target() == "transpose" || from->target() == "squeeze"
                   ? from->arg_node(0)
                   : nullptr;
        if (from != nullptr && !in_scope(from->scope(), path)) from = nullptr;
      }
      if (from == nullptr) return fmt::format("the attention weights of '{}' are used by {}", path, user->name());
    }
  }
  if (!traced) return std::nullopt;
  return std::string();
}

bool holds(const ChannelGroup& g, const std::string& tensor, std::int64_t dim) {
  return std::any_of(g.members.begin(), g.members.end(),
                     [&](const GroupMember& m) { return m.tensor == tensor && m.dim == dim; });
}

}  // namespace

void add_attention_heads(const Module& model, const GraphCollection& collection, std::vector<ChannelGroup>& groups) {
  for (const NamedModule& named : model.named_modules()) {
    const auto* attention = dynamic_cast<const nn::MultiheadAttentionImpl*>(named.module);
    if (attention == nullptr || !attention->in_proj_weight.defined() || !attention->out_proj) continue;
    const std::vector<std::int64_t> w = attention->in_proj_weight.meta().shape.sizes();
    const std::int64_t heads = attention->num_heads;
    if (w.size() != 2 || heads <= 0 || w[0] % (3 * heads) != 0) continue;
    const std::int64_t d = w[0] / (3 * heads);
    const std::string p = named.path;
    // Its projections held by another module too (a tied weight, a shared out_proj) would be
    // cut there as well. Checked first: the graph then names them by another path, and its own
    // checks would give a less direct reason.
    std::string why;
    if (attention->out_proj->num_registrations() > 1) why = fmt::format("'{}.out_proj' is shared", p);
    const std::array<const Tensor*, 3> mine_all{&attention->in_proj_weight, &attention->in_proj_bias,
                                                &attention->out_proj->weight};
    for (const NamedModule& other : model.named_modules()) {
      if (!why.empty()) break;
      if (other.module == attention || other.module == attention->out_proj.ptr().get()) continue;
      for (bool parameters : {true, false}) {
        other.module->for_each_own_tensor(parameters, [&](std::string_view name, const Tensor& t) {
          for (const Tensor* mine : mine_all) {
            if (why.empty() && mine->defined() && t.shares_storage_with(*mine))
              why = fmt::format("'{}' shares its data with '{}{}{}'", p, other.path, other.path.empty() ? "" : ".", name);
          }
        });
      }
    }
    // The graphs that traced it through: the group is the innermost one's, and any of them
    // that sees the heads outside the layer refuses it.
    const GraphCollection::Entry* entry = nullptr;
    for (const GraphCollection::Entry& e : collection) {
      if (!(e.path.empty() || in_scope(named.path, e.path)) || e.path == named.path) continue;
      const std::string relative = e.path.empty() ? named.path : named.path.substr(e.path.size() + 1);
      const std::optional<std::string> seen = heads_seen_outside(e.graph, relative);
      if (!seen) continue;
      if (entry == nullptr || e.path.size() > entry->path.size()) entry = &e;
      if (why.empty()) why = *seen;
    }
    if (entry == nullptr) continue;  // in a failed module: its layers are listed as hidden
    ChannelGroup g;
    g.graph = entry->path;
    g.channels = heads;
    g.width = d;
    for (std::int64_t part = 0; part < 3; ++part) {
      g.members.push_back({p + ".in_proj_weight", 0, part * heads * d, ChannelRole::out});
      if (attention->in_proj_bias.defined()) g.members.push_back({p + ".in_proj_bias", 0, part * heads * d, ChannelRole::out});
    }
    g.members.push_back({p + ".out_proj.weight", 1, 0, ChannelRole::in});
    if (!why.empty()) {
      g.prunable = false;
      g.reason = why;
    } else if (heads == 1) {
      g.prunable = false;
      g.reason = fmt::format("'{}' has one head, which no cut can remove", p);
    }
    // The graph's own group of the output projection's inputs (stopped at the heads' reshape)
    // is this one; any other group holding these tensors makes the cut unsafe.
    auto same = std::find_if(groups.begin(), groups.end(), [&](const ChannelGroup& x) {
      return !x.prunable && x.members.size() == 1 && holds(x, p + ".out_proj.weight", 1);
    });
    const ChannelGroup* replaced = same == groups.end() ? nullptr : &*same;
    for (const ChannelGroup& x : groups) {
      if (&x == replaced) continue;
      if (holds(x, p + ".in_proj_weight", 0) || holds(x, p + ".out_proj.weight", 1) ||
          holds(x, p + ".in_proj_bias", 0)) {
        if (g.prunable) g.reason = fmt::format("the projections of '{}' are in another group too", p);
        g.prunable = false;
      }
    }
    if (same != groups.end()) {
      *same = std::move(g);
    } else {
      groups.push_back(std::move(g));
    }
  }
}

}  // namespace symtrace::detail
