// Channel-dependency analysis: one forward walk over a graph in node order, with a union-find
// over *channel sets*. Each tensor-valued node gets the channel sets its channel dim carries
// (one set, or several after a concatenation along that dim: segments), or none. A layer's
// output (channel_mixing) makes a new set; ops that keep channels pass them on; ops that
// combine tensors elementwise unite the sets they combine; whatever reaches a boundary (an op
// without channel properties, a call_module leaf, the graph's output) is fixed with a reason.
// Parameters read by get_attr are followed from the end of their shape (as broadcasting
// aligns them) until they meet a set, where they become its `param` members.
//
// The walk is linear in the number of nodes and arguments; the union-find uses path halving
// and union by size.

#include "symtrace/analysis/channel_groups.hpp"

#include "analysis/attention_heads.hpp"

#include "symtrace/graph/graph.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/registry.hpp"

#include <boost/container/small_vector.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace symtrace {

std::string_view to_string(ChannelRole role) noexcept {
  switch (role) {
    case ChannelRole::out: return "out";
    case ChannelRole::in: return "in";
    case ChannelRole::param: return "param";
  }
  return "param";
}

std::vector<std::string> ChannelGroup::producers() const {
  std::vector<std::string> out;
  for (const GroupMember& m : members) {
    if (m.role != ChannelRole::out) continue;
    const std::size_t dot = m.tensor.rfind('.');
    std::string module = dot == std::string::npos ? std::string() : m.tensor.substr(0, dot);
    if (std::find(out.begin(), out.end(), module) == out.end()) out.push_back(std::move(module));
  }
  return out;
}

std::size_t ChannelGroups::num_prunable() const noexcept {
  return static_cast<std::size_t>(std::count_if(groups.begin(), groups.end(), [](const ChannelGroup& g) { return g.prunable; }));
}

namespace {

/// A run of channels of one set, within a tensor's channel dim.
struct Segment {
  int set = 0;
  std::int64_t length = 0;
};
using Segments = boost::container::small_vector<Segment, 1>;

/// What the analysis knows of one tensor-valued node.
struct Info {
  int dim = -1;       ///< the channel dim (>= 0) when `segments` is set
  Segments segments;  ///< the channel sets along `dim`, in order
  /// For a parameter (or a view of one aligned from the end): its path and its own rank.
  std::optional<std::pair<std::string, int>> param;
  [[nodiscard]] bool has_channels() const noexcept { return dim >= 0; }
  [[nodiscard]] std::int64_t channels() const noexcept {
    std::int64_t n = 0;
    for (const Segment& s : segments) n += s.length;
    return n;
  }
};

struct Set {
  int parent;
  int size = 1;
  std::int64_t channels;
  bool fixed = false;
  std::string reason;
  std::int64_t period = 0;    ///< 0, or the blocks a cut keeps alike (grouped convolutions)
  std::string period_reason;  ///< the grouped convolution that set `period`
};

class Analysis {
 public:
  Analysis(const Graph& graph, const std::string& prefix) : graph_(graph), prefix_(prefix) {}

  std::vector<ChannelGroup> run(const std::string& graph_path) {
    info_.resize(graph_.id_bound());
    for (const Node& node : graph_.nodes()) visit(node);
    return groups(graph_path);
  }

 private:
  // ---- Sets ---------------------------------------------------------------------------------

  int new_set(std::int64_t channels) {
    const int id = static_cast<int>(sets_.size());
    sets_.push_back(Set{id, 1, channels, false, {}, 0, {}});
    return id;
  }
  int find(int s) {
    while (sets_[s].parent != s) {
      sets_[s].parent = sets_[sets_[s].parent].parent;
      s = sets_[s].parent;
    }
    return s;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (sets_[a].size < sets_[b].size) std::swap(a, b);
    sets_[b].parent = a;
    sets_[a].size += sets_[b].size;
    if (sets_[b].fixed && !sets_[a].fixed) {
      sets_[a].fixed = true;
      sets_[a].reason = std::move(sets_[b].reason);
    }
    if (sets_[b].period != 0) constrain(a, sets_[b].period, sets_[b].period_reason);
  }
  /// Requires a cut of set `s` to keep the same positions in every block of `period` channels
  /// (with another period already there: every block of their gcd).
  void constrain(int s, std::int64_t period, const std::string& why) {
    Set& set = sets_[find(s)];
    const std::int64_t p = set.period == 0 ? period : std::gcd(set.period, period);
    const std::string before = set.period == 0 ? std::string() : set.period_reason;
    if (p != set.period) {
      set.period = p;
      set.period_reason = why;
    }
    if (p != 1) return;
    if (period == 1 || before.empty() || before == why) {
      fix(s, fmt::format("{}: one channel per group, which no cut keeps alike in every group", why));
    } else {
      fix(s, fmt::format("{} and {}: their groups have no common size, so no cut keeps the channels alike in every group",
                         before, why));
    }
  }
  void fix(int s, const std::string& reason) {
    Set& set = sets_[find(s)];
    if (set.fixed) return;
    set.fixed = true;
    set.reason = reason;
  }
  void fix(const Info& info, const std::string& reason) {
    for (const Segment& seg : info.segments) fix(seg.set, reason);
  }
  void add_member(int set, std::string tensor, std::int64_t dim, std::int64_t offset, ChannelRole role,
                  std::int64_t period = 0) {
    members_.push_back({set, GroupMember{prefix_ + tensor, dim, offset, role, period}});
  }

  // ---- Nodes --------------------------------------------------------------------------------

  const Node* node_at(const Argument& a) const {
    const NodeId* id = a.get_if<NodeId>();
    return id ? graph_.find_node(*id) : nullptr;
  }
  Info& info(const Node& n) { return info_[n.id().value]; }
  static int rank_of(const Node& n) {
    const TensorMeta* m = n.tensor_meta();
    return m != nullptr && m->shape.is_rank_known() ? static_cast<int>(m->shape.rank()) : -1;
  }
  static std::optional<std::int64_t> size_of(const Node& n, int dim) {
    const TensorMeta* m = n.tensor_meta();
    if (m == nullptr || !m->shape.is_rank_known() || dim < 0 || dim >= static_cast<int>(m->shape.rank())) return {};
    return m->shape[static_cast<std::size_t>(dim)].maybe();
  }
  static std::string at(const Node& n) {
    const std::source_location w = n.where();
    return w.line() == 0 ? std::string() : fmt::format(" at {}:{}", w.file_name(), w.line());
  }
  /// What a tensor without channel sets is, for reasons: "the graph's input 'x'", ...
  std::string origin(const Node& n) const {
    switch (n.op()) {
      case OpKind::placeholder: return fmt::format("the graph's input '{}'", n.target());
      case OpKind::get_attr: return fmt::format("'{}'", n.target());
      case OpKind::call_module:
        return n.meta(meta_keys::failure) != nullptr ? fmt::format("failed module '{}'", n.target())
                                                     : fmt::format("leaf module '{}'", n.target());
      default: return fmt::format("{}{}", n.target(), at(n));
    }
  }
  /// "used by <what>", naming the node that stops the channels.
  std::string used_by(const Node& n) const {
    if (n.op() == OpKind::output) return "reaches the graph's output";
    if (n.op() == OpKind::call_module) return fmt::format("used by {}", origin(n));
    return fmt::format("used by {}{}", n.target(), at(n));
  }

  /// The argument of `op` called `name` (positional, keyword, or the schema's default).
  const Argument* argument(const Node& n, const OpDef& op, std::string_view name) {
    const std::optional<std::size_t> i = op.schema.find_arg(name);
    if (!i) return nullptr;
    if (*i < n.args().size()) return &n.args()[*i];
    if (const Argument* kw = n.kwarg(name)) return kw;
    const ArgSpec& spec = op.schema.args[*i];
    if (!spec.default_value) return nullptr;
    const Value& v = *spec.default_value;
    if (v.is_int()) return &defaults_.emplace_back(v.to_int());
    if (v.is_none()) return &defaults_.emplace_back();
    if (v.is_list()) {
      ArgumentList list;
      for (const Value& e : v.to_list()) {
        if (!e.is_int()) return nullptr;
        list.emplace_back(e.to_int());
      }
      return &defaults_.emplace_back(std::move(list));
    }
    if (v.is_bool()) return &defaults_.emplace_back(v.to_bool());
    return nullptr;
  }
  std::optional<std::int64_t> int_argument(const Node& n, const OpDef& op, std::string_view name) {
    const Argument* a = argument(n, op, name);
    const std::int64_t* v = a ? a->get_if<std::int64_t>() : nullptr;
    return v ? std::optional(*v) : std::nullopt;
  }
  std::optional<std::vector<std::int64_t>> ints_argument(const Node& n, const OpDef& op, std::string_view name) {
    const Argument* a = argument(n, op, name);
    if (a == nullptr) return std::nullopt;
    if (const std::int64_t* v = a->get_if<std::int64_t>()) return std::vector<std::int64_t>{*v};
    const ArgumentList* list = a->get_if<ArgumentList>();
    if (list == nullptr) return std::nullopt;
    std::vector<std::int64_t> out;
    for (const Argument& e : *list) {
      const std::int64_t* v = e.get_if<std::int64_t>();
      if (v == nullptr) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
  static std::optional<int> normalize(std::int64_t dim, int rank) {
    if (rank < 0) return std::nullopt;
    const std::int64_t d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank) return std::nullopt;
    return static_cast<int>(d);
  }

  /// Every tensor node an argument holds (lists included).
  template <class F>
  void for_each_tensor(const Argument& a, F&& f) {
    if (const Node* n = node_at(a)) {
      f(*n);
    } else if (const ArgumentList* list = a.get_if<ArgumentList>()) {
      for (const Argument& e : *list) for_each_tensor(e, f);
    }
  }
  /// Fixes the channels of every tensor argument of `n` and leaves its result without any; a
  /// parameter among them is used where its dims cannot be followed (escape).
  void boundary(const Node& n) {
    const std::string reason = used_by(n);
    auto stop = [&](const Node& in) {
      fix(info(in), reason);
      escape(in, reason);
    };
    for (const Argument& a : n.args()) for_each_tensor(a, stop);
    for (const auto& [key, a] : n.kwargs()) for_each_tensor(a, stop);
  }
  /// Records that parameter `t` (if it is one) is used where its dims cannot be followed: a
  /// group holding it cannot be cut.
  void escape(const Node& t, const std::string& reason) {
    if (const Info& i = info(t); i.param) escaped_.try_emplace(i.param->first, reason);
  }
  /// `n`'s result keeps `in`'s channels at `dim` (a boundary when `dim` is not one of its dims:
  /// metadata that does not add up, as a graph read from a file may have).
  void pass(const Node& n, const Info& in, int dim, Info& out) {
    if (dim < 0 || dim >= rank_of(n)) return boundary(n);
    out.dim = dim;
    out.segments = in.segments;
  }

  void visit(const Node& n) {
    Info& out = info(n);
    switch (n.op()) {
      case OpKind::placeholder: return;
      case OpKind::get_attr: {
        const int r = rank_of(n);
        if (r >= 0 && graph_.find_constant(n.target()) == nullptr) out.param = {std::string(n.target()), r};
        return;
      }
      case OpKind::output:
      case OpKind::call_module: boundary(n); return;
      case OpKind::call_function:
      case OpKind::call_method: break;
    }
    const OpDef* op = OpRegistry::instance().find(n.target());
    if (op == nullptr) return boundary(n);
    if (op->schema.returns_number()) return;  // a size: it carries no channels
    if (op->has(OpFlags::channel_mixing)) return mixing(n, *op, out);
    if (op->has(OpFlags::concatenation)) return concatenation(n, *op, out);
    if (op->has(OpFlags::elementwise)) return elementwise(n, *op, out);
    if (op->has(OpFlags::channel_passthrough)) return passthrough(n, *op, out);
    if (op->has(OpFlags::reshape)) return reshape(n, out);
    if (op->has(OpFlags::permutation)) return permutation(n, *op, out);
    if (op->has(OpFlags::dim_indexing)) return dim_indexing(n, *op, out);
    if (op->has(OpFlags::reduction)) return reduction(n, *op, out);
    boundary(n);
  }

  /// The channel sets of `in` along `dim`, `channels` long: its own when it carries them
  /// there, else one new fixed set (the channels come from something that cannot be pruned).
  Segments channels_at(const Node& in, int dim, std::int64_t channels, const Node& user) {
    Info& i = info(in);
    if (i.has_channels() && i.dim == dim && i.channels() == channels) return i.segments;
    if (i.has_channels()) fix(i, fmt::format("used along another dim by {}{}", user.target(), at(user)));
    const int s = new_set(channels);
    fix(s, fmt::format("comes from {}", origin(in)));
    if (!i.has_channels() && !i.param) {  // every layer reading these channels shares the set
      i.dim = dim;
      i.segments = {Segment{s, channels}};
    }
    return {Segment{s, channels}};
  }

  void mixing(const Node& n, const OpDef& op, Info& out) {
    const Argument* input_arg = argument(n, op, "input");
    const Argument* weight_arg = argument(n, op, "weight");
    const Node* input = input_arg ? node_at(*input_arg) : nullptr;
    const Node* weight = weight_arg ? node_at(*weight_arg) : nullptr;
    const Info* w = weight ? &info(*weight) : nullptr;
    if (input == nullptr || w == nullptr || !w->param || w->param->second < 2 || rank_of(*weight) != w->param->second) {
      return boundary(n);  // a computed weight: not a layer whose channels can be cut
    }
    const std::string& weight_path = w->param->first;
    const int w_rank = w->param->second;
    const int in_rank = rank_of(*input);
    const int out_rank = rank_of(n);
    const std::optional<std::int64_t> c_out = size_of(*weight, 0);
    const std::optional<std::int64_t> c_in_group = size_of(*weight, 1);
    const Argument* groups_arg = argument(n, op, "groups");
    if (groups_arg != nullptr && groups_arg->get_if<std::int64_t>() == nullptr) return boundary(n);
    const std::int64_t groups = groups_arg ? *groups_arg->get_if<std::int64_t>() : 1;
    std::int64_t c_in = 0;
    if (!c_out || !c_in_group || groups < 1 || __builtin_mul_overflow(*c_in_group, groups, &c_in)) return boundary(n);
    const Argument* bias_arg = argument(n, op, "bias");
    const Node* bias = bias_arg ? node_at(*bias_arg) : nullptr;
    const Info* b = bias ? &info(*bias) : nullptr;
    const bool bias_param = b != nullptr && b->param && b->param->second == 1;
    if (in_rank < w_rank - 1 || out_rank < w_rank - 1) {
      // Sizes unknown (a module traced on its own, never called before its parent failed):
      // still a layer, whose channels cannot be followed either way.
      boundary(n);
      const std::string reason = fmt::format("the rank of the tensors around {}{} is unknown", n.target(), at(n));
      const int in_set = new_set(c_in);
      const int out_set = new_set(*c_out);
      fix(in_set, reason);
      fix(out_set, reason);
      add_member(in_set, weight_path, 1, 0, ChannelRole::in);
      add_member(out_set, weight_path, 0, 0, ChannelRole::out);
      if (bias_param) add_member(out_set, b->param->first, 0, 0, ChannelRole::out);
      return;
    }
    const int in_dim = in_rank - (w_rank - 1);
    const int out_dim = out_rank - (w_rank - 1);
    escape(*input, fmt::format("the input of {}{}", n.target(), at(n)));
    const Segments in = channels_at(*input, in_dim, c_in, n);
    // A bias computed in the graph would keep its length when the channels are cut.
    const bool computed_bias = bias != nullptr && !bias_param;
    const std::string bias_reason =
        computed_bias ? fmt::format("a bias computed in the graph is added by {}{}", n.target(), at(n)) : std::string();
    if (computed_bias) fix(*b, bias_reason);

    if (groups > 1 && *c_in_group == 1 && *c_out == groups) {
      // Depthwise: output channel c is input channel c filtered; the channels go through.
      std::int64_t offset = 0;
      for (const Segment& s : in) {
        add_member(s.set, weight_path, 0, offset, ChannelRole::param);
        if (bias_param) add_member(s.set, b->param->first, 0, offset, ChannelRole::param);
        if (computed_bias) fix(s.set, bias_reason);
        offset += s.length;
      }
      out.dim = out_dim;
      out.segments = in;
      return;
    }
    // A grouped convolution: its weight's dim 1 holds one group's input channels, read by
    // every group, and its groups must stay equal. So a cut keeps the same positions in every
    // group, of its input channels and of its output channels (Torch-Pruning cuts grouped
    // convolutions so too); the number of groups does not change.
    const bool grouped = groups > 1;
    const std::string grouped_reason =
        grouped ? fmt::format("grouped by {}{} (groups={})", n.target(), at(n), groups) : std::string();
    std::int64_t offset = 0;
    for (const Segment& s : in) {
      add_member(s.set, weight_path, 1, grouped ? 0 : offset, ChannelRole::in, grouped ? *c_in_group : 0);
      if (grouped && in.size() > 1) fix(s.set, grouped_reason + ", reading concatenated channels");
      offset += s.length;
    }
    if (grouped && in.size() == 1) constrain(in[0].set, *c_in_group, grouped_reason);
    const int set = new_set(*c_out);
    add_member(set, weight_path, 0, 0, ChannelRole::out);
    if (bias_param) add_member(set, b->param->first, 0, 0, ChannelRole::out);
    if (computed_bias) fix(set, bias_reason);
    if (grouped && *c_out % groups != 0) fix(set, grouped_reason);
    if (grouped && *c_out % groups == 0) constrain(set, *c_out / groups, grouped_reason);
    out.dim = out_dim;
    out.segments = {Segment{set, *c_out}};
  }

  /// Ties an operand that broadcasts against `out`'s channel dim (`out_rank` dims) to its sets.
  void tie(const Node& n, const Node& operand, int out_rank, Info& out) {
    Info& o = info(operand);
    const int r = rank_of(operand);
    if (r < 0) return fix(out, fmt::format("combined with a tensor of unknown rank by {}{}", n.target(), at(n)));
    const int q = out.dim - (out_rank - r);
    if (q < 0 || (size_of(operand, q) == std::optional<std::int64_t>(1) && out.channels() != 1)) {
      if (o.has_channels()) fix(o, fmt::format("broadcast across other channels by {}{}", n.target(), at(n)));
      return;  // broadcast along the channels: no constraint
    }
    if (o.has_channels() && o.dim == q) {
      if (o.channels() != out.channels()) {
        const std::string reason = fmt::format("combined with {} channels of another count by {}{}", o.channels(),
                                               n.target(), at(n));
        fix(o, reason);
        return fix(out, reason);
      }
      if (o.segments.size() == 1 && out.segments.size() == 1) return unite(o.segments[0].set, out.segments[0].set);
      const bool same = o.segments.size() == out.segments.size() &&
                        std::equal(o.segments.begin(), o.segments.end(), out.segments.begin(),
                                   [](const Segment& a, const Segment& b) { return a.length == b.length; });
      if (same) {
        for (std::size_t i = 0; i < o.segments.size(); ++i) unite(o.segments[i].set, out.segments[i].set);
        return;
      }
      const std::string reason = fmt::format("concatenated channels combined with others by {}{}", n.target(), at(n));
      fix(o, reason);
      return fix(out, reason);
    }
    if (o.has_channels()) fix(o, fmt::format("combined along another dim by {}{}", n.target(), at(n)));
    if (o.param && q - (r - o.param->second) >= 0 && !o.has_channels()) {
      std::int64_t offset = 0;
      for (const Segment& s : out.segments) {
        add_member(s.set, o.param->first, q - (r - o.param->second), offset, ChannelRole::param);
        offset += s.length;
      }
      return;
    }
    fix(out, fmt::format("combined with {} by {}{}", origin(operand), n.target(), at(n)));
  }

  void elementwise(const Node& n, const OpDef& op, Info& out) { combine(n, op, out, std::nullopt); }

  /// Elementwise combination of the tensor arguments (a cat along another dim is one too, with
  /// `skip_dim` the dim it joins along).
  void combine(const Node& n, const OpDef&, Info& out, std::optional<int> skip_dim) {
    const int out_rank = rank_of(n);
    std::vector<const Node*> operands;
    for (const Argument& a : n.args()) for_each_tensor(a, [&](const Node& t) { operands.push_back(&t); });
    for (const auto& [key, a] : n.kwargs()) for_each_tensor(a, [&](const Node& t) { operands.push_back(&t); });
    if (out_rank < 0) return boundary(n);
    // The first operand whose channels span the result's dim decides the result's channel dim
    // (one broadcast along it, [N, 1, H, W] times [N, C, H, W], does not).
    for (const Node* t : operands) {
      const Info& i = info(*t);
      const int r = rank_of(*t);
      if (!i.has_channels() || r < 0) continue;
      const int q = i.dim + (out_rank - r);
      if (skip_dim && q == *skip_dim) continue;
      const std::optional<std::int64_t> size = size_of(n, q);
      if (size && *size != i.channels()) continue;
      pass(n, i, q, out);
      break;
    }
    if (!out.has_channels()) {
      // No channels: a parameter seen through a one-operand op stays that parameter; one
      // mixed with other tensors goes where it cannot be followed.
      if (operands.size() == 1 && info(*operands[0]).param && rank_of(*operands[0]) == out_rank) {
        out.param = info(*operands[0]).param;
        return;
      }
      for (const Node* t : operands) escape(*t, fmt::format("used by {}{}", n.target(), at(n)));
      return;
    }
    for (const Node* t : operands) tie(n, *t, out_rank, out);
  }

  void passthrough(const Node& n, const OpDef& op, Info& out) {
    const Node* input = n.args().empty() ? nullptr : node_at(n.args()[0]);
    if (input == nullptr) return boundary(n);
    const Info& in = info(*input);
    const int r = rank_of(*input);
    const int out_rank = rank_of(n);
    if (out_rank < 0 || r < 0) return boundary(n);
    if (!in.has_channels()) {
      out.param = in.param;
      return note_secondary(n, op, nullptr);
    }
    const int q = in.dim + (out_rank - r);
    if (size_of(n, q) && *size_of(n, q) != in.channels()) return boundary(n);
    pass(n, in, q, out);
    note_secondary(n, op, &out);
  }
  /// A passthrough op's other tensor arguments. One whose dim crosses the channels (a one-dim
  /// tensor as long as them, as batch_norm's; or, for an op normalising over trailing dims
  /// (layer_norm), the dim aligned from the end) is cut with them: a parameter becomes a
  /// member, a tensor with these channels is tied, anything else stops them. Channels that
  /// cross a tensor's other dims stop there.
  void note_secondary(const Node& n, const OpDef& op, const Info* out) {
    const Argument* normalized = argument(n, op, "normalized_shape");
    bool member_here = false;
    auto secondary = [&](const Node& t) {
      Info& i = info(t);
      if (out == nullptr) {
        if (i.has_channels()) fix(i, used_by(n));
        return;
      }
      const int r = rank_of(t);
      std::optional<int> q;
      if (normalized == nullptr && r == 1) {
        q = 0;
      } else if (r >= 0 && out->dim - (rank_of(n) - r) >= 0) {
        q = out->dim - (rank_of(n) - r);
      }
      const bool crosses = q && size_of(t, *q) == std::optional(out->channels());
      if (crosses && i.param && !i.has_channels()) {
        std::int64_t offset = 0;
        for (const Segment& s : out->segments) {
          add_member(s.set, i.param->first, *q, offset, ChannelRole::param);
          offset += s.length;
        }
        member_here = true;
      } else if (crosses && i.has_channels() && i.dim == *q) {
        Info copy = *out;  // the same channels, along the tensor's own dim
        copy.dim = *q;
        tie(n, t, r, copy);
      } else if (crosses) {
        if (i.has_channels()) fix(i, used_by(n));
        fix(*out, fmt::format("used with {} by {}{}", origin(t), n.target(), at(n)));
      } else if (i.has_channels()) {
        fix(i, used_by(n));
      }
    };
    for (std::size_t k = 1; k < n.args().size(); ++k) for_each_tensor(n.args()[k], secondary);
    for (const auto& [key, a] : n.kwargs()) for_each_tensor(a, secondary);
    if (out != nullptr && normalized != nullptr) {
      // Normalised over dims that include the channels: each channel's result depends on the
      // statistics of all of them, so a cut would change what the kept ones compute; and with
      // no weight to carry their new number, the op's normalized_shape would keep the old one.
      const std::optional<std::vector<std::int64_t>> dims = ints_argument(n, op, "normalized_shape");
      if (!dims || out->dim >= rank_of(n) - static_cast<int>(dims->size())) {
        fix(*out, member_here ? fmt::format("normalised together by {}{}: cutting some channels changes what the "
                                            "others compute",
                                            n.target(), at(n))
                              : fmt::format("normalised over the channels by {}{} without a weight to cut with them",
                                            n.target(), at(n)));
      }
    }
    if (out != nullptr && n.target() == "group_norm") {
      fix(*out, fmt::format("normalised in groups of channels by {}{}: cutting some channels changes what the others "
                            "compute",
                            n.target(), at(n)));
    }
  }

  void concatenation(const Node& n, const OpDef& op, Info& out) {
    const Argument* list_arg = argument(n, op, "tensors");
    const int out_rank = rank_of(n);
    const std::optional<int> dim = normalize(int_argument(n, op, "dim").value_or(0), out_rank);
    const ArgumentList* list = list_arg ? list_arg->get_if<ArgumentList>() : nullptr;
    if (list == nullptr || !dim) return boundary(n);
    bool along_channels = false;
    for (const Argument& a : *list) {
      const Node* t = node_at(a);
      if (t != nullptr && info(*t).has_channels() && info(*t).dim == *dim && rank_of(*t) == out_rank) along_channels = true;
    }
    if (!along_channels) return combine(n, op, out, dim);
    Segments segments;
    std::int64_t total = 0;
    for (const Argument& a : *list) {
      const Node* t = node_at(a);
      const std::optional<std::int64_t> size = t ? size_of(*t, *dim) : std::nullopt;
      if (t == nullptr || !size || __builtin_add_overflow(total, *size, &total)) return boundary(n);
    }
    for (const Argument& a : *list) {
      const Node* t = node_at(a);
      for (const Segment& s : channels_at(*t, *dim, *size_of(*t, *dim), n)) segments.push_back(s);
    }
    out.dim = *dim;
    out.segments = std::move(segments);
  }

  void reshape(const Node& n, Info& out) {
    const Node* input = n.args().empty() ? nullptr : node_at(n.args()[0]);
    if (input == nullptr || !info(*input).has_channels()) return boundary(n);
    const Info& in = info(*input);
    const TensorMeta* im = input->tensor_meta();
    const TensorMeta* om = n.tensor_meta();
    if (im == nullptr || om == nullptr || !im->shape.is_rank_known() || !om->shape.is_rank_known()) return boundary(n);
    // The dim survives when the sizes before it multiply to the same number on both sides
    // and its own size is unchanged.
    std::int64_t before = 1;
    for (int i = 0; i < in.dim; ++i) {
      const std::optional<std::int64_t> d = im->shape[static_cast<std::size_t>(i)].maybe();
      if (!d || __builtin_mul_overflow(before, *d, &before)) return boundary(n);
    }
    std::int64_t product = 1;
    for (std::size_t j = 0; j < om->shape.rank(); ++j) {
      const std::optional<std::int64_t> d = om->shape[j].maybe();
      if (!d) return boundary(n);
      if (product == before && *d == in.channels()) return pass(n, in, static_cast<int>(j), out);
      if (__builtin_mul_overflow(product, *d, &product) || (product > before && before != 0)) break;
    }
    boundary(n);
  }

  void permutation(const Node& n, const OpDef& op, Info& out) {
    const Node* input = n.args().empty() ? nullptr : node_at(n.args()[0]);
    if (input == nullptr || !info(*input).has_channels()) return boundary(n);
    const Info& in = info(*input);
    const int r = rank_of(*input);
    if (const auto dims = ints_argument(n, op, "dims")) {
      for (std::size_t j = 0; j < dims->size(); ++j) {
        if (normalize((*dims)[j], r) == std::optional(in.dim)) return pass(n, in, static_cast<int>(j), out);
      }
      return boundary(n);
    }
    const std::optional<int> a = normalize(int_argument(n, op, "dim0").value_or(-1000), r);
    const std::optional<int> b = normalize(int_argument(n, op, "dim1").value_or(-1000), r);
    if (!a || !b) return boundary(n);
    pass(n, in, in.dim == *a ? *b : in.dim == *b ? *a
                                                 : in.dim,
         out);
  }

  void dim_indexing(const Node& n, const OpDef& op, Info& out) {
    const Node* input = n.args().empty() ? nullptr : node_at(n.args()[0]);
    if (input == nullptr || !info(*input).has_channels()) return boundary(n);
    const Info& in = info(*input);
    const int r = rank_of(*input);
    const int out_rank = rank_of(n);
    if (r < 0 || out_rank < 0) return boundary(n);
    const Argument* dim_arg = argument(n, op, "dim");
    const std::int64_t* dim_value = dim_arg ? dim_arg->get_if<std::int64_t>() : nullptr;
    if (dim_value == nullptr && (dim_arg == nullptr || !dim_arg->is_none())) return boundary(n);
    if (dim_value == nullptr) {  // squeeze(): every dim of size 1 goes
      if (out_rank > r) return boundary(n);
      int removed = 0;
      for (int i = 0; i < in.dim; ++i) {
        const std::optional<std::int64_t> d = size_of(*input, i);
        if (!d) return boundary(n);
        removed += *d == 1 ? 1 : 0;
      }
      if (in.channels() == 1) return boundary(n);
      return pass(n, in, in.dim - removed, out);
    }
    if (out_rank == r + 1) {  // unsqueeze: a new dim at `dim` of the output
      const std::optional<int> d = normalize(*dim_value, out_rank);
      if (!d) return boundary(n);
      return pass(n, in, in.dim + (*d <= in.dim ? 1 : 0), out);
    }
    const std::optional<int> d = normalize(*dim_value, r);
    if (!d || *d == in.dim) return boundary(n);  // a part of the channels: they cannot be followed
    if (out_rank == r) return pass(n, in, in.dim, out);
    if (out_rank == r - 1) return pass(n, in, in.dim - (*d < in.dim ? 1 : 0), out);
    boundary(n);
  }

  void reduction(const Node& n, const OpDef& op, Info& out) {
    const Node* input = n.args().empty() ? nullptr : node_at(n.args()[0]);
    if (input == nullptr || !info(*input).has_channels()) return boundary(n);
    const Info& in = info(*input);
    const int r = rank_of(*input);
    const std::optional<std::vector<std::int64_t>> dims = ints_argument(n, op, "dim");
    if (!dims || dims->empty()) return boundary(n);  // everything reduced
    const Argument* keep = argument(n, op, "keepdim");
    const bool* keepdim = keep ? keep->get_if<bool>() : nullptr;
    int before = 0;
    std::vector<int> seen;
    for (std::int64_t d : *dims) {
      const std::optional<int> k = normalize(d, r);
      if (!k || *k == in.dim || std::find(seen.begin(), seen.end(), *k) != seen.end()) return boundary(n);
      seen.push_back(*k);
      before += *k < in.dim ? 1 : 0;
    }
    pass(n, in, keepdim != nullptr && *keepdim ? in.dim : in.dim - before, out);
  }

  // ---- Results ------------------------------------------------------------------------------

  std::vector<ChannelGroup> groups(const std::string& graph_path) {
    // A tensor used twice (a layer called twice, a weight shared by two layers) holds the
    // channels of each use: the same channels are one group; others overlapping them cannot
    // be cut independently.
    std::map<std::pair<std::string_view, std::int64_t>, std::vector<std::pair<int, std::int64_t>>> uses;
    for (const auto& [set, m] : members_) {
      auto& seen = uses[{m.tensor, m.dim}];
      for (const auto& [other, offset] : seen) {
        const std::int64_t a = sets_[static_cast<std::size_t>(find(set))].channels;
        const std::int64_t b = sets_[static_cast<std::size_t>(find(other))].channels;
        if (offset == m.offset && a == b) {
          unite(set, other);
        } else if (m.offset < offset + b && offset < m.offset + a) {
          const std::string reason = fmt::format("'{}' holds other channels along dim {} too", m.tensor, m.dim);
          fix(set, reason);
          fix(other, reason);
        }
      }
      seen.emplace_back(set, m.offset);
    }
    for (const auto& [set, m] : members_) {
      auto it = escaped_.find(m.tensor.substr(prefix_.size()));
      if (it != escaped_.end()) fix(set, fmt::format("'{}' is used where its dims cannot be followed ({})", m.tensor, it->second));
    }
    std::vector<ChannelGroup> out;
    std::unordered_map<int, std::size_t> index;  // root set -> group
    std::vector<bool> has_layer(sets_.size(), false);
    for (const auto& [set, member] : members_) {
      if (member.role != ChannelRole::param) has_layer[static_cast<std::size_t>(find(set))] = true;
    }
    for (const auto& [set, member] : members_) {
      const int root = find(set);
      if (!has_layer[static_cast<std::size_t>(root)]) continue;
      auto [it, inserted] = index.try_emplace(root, out.size());
      if (inserted) {
        ChannelGroup g;
        g.graph = graph_path;
        g.channels = sets_[static_cast<std::size_t>(root)].channels;
        g.prunable = !sets_[static_cast<std::size_t>(root)].fixed;
        g.reason = sets_[static_cast<std::size_t>(root)].reason;
        const std::int64_t period = sets_[static_cast<std::size_t>(root)].period;
        g.period = period == g.channels ? 0 : period;
        out.push_back(std::move(g));
      }
      std::vector<GroupMember>& ms = out[it->second].members;
      if (std::find(ms.begin(), ms.end(), member) == ms.end()) ms.push_back(member);
    }
    return out;
  }

  const Graph& graph_;
  std::string prefix_;
  std::vector<Info> info_;
  std::vector<Set> sets_;
  std::vector<std::pair<int, GroupMember>> members_;
  std::deque<Argument> defaults_;                         // schema defaults handed out by argument()
  std::unordered_map<std::string, std::string> escaped_;  // parameter -> where it escapes
};

}  // namespace

std::vector<ChannelGroup> channel_groups(const Graph& graph, const std::string& path) {
  const std::string prefix = path.empty() ? std::string() : path + ".";
  return Analysis(graph, prefix).run(path);
}

ChannelGroups channel_groups(const Module& model, const GraphCollection& collection) {
  ChannelGroups result;
  std::set<std::vector<std::tuple<std::string, std::int64_t, std::int64_t, ChannelRole>>> seen;
  for (const GraphCollection::Entry& entry : collection) {
    for (ChannelGroup& g : channel_groups(entry.graph, entry.path)) {
      std::vector<std::tuple<std::string, std::int64_t, std::int64_t, ChannelRole>> key;
      for (const GroupMember& m : g.members) key.emplace_back(m.tensor, m.dim, m.offset, m.role);
      std::sort(key.begin(), key.end());
      if (seen.insert(std::move(key)).second) result.groups.push_back(std::move(g));
    }
  }
  detail::add_attention_heads(model, collection, result.groups);
  // A tensor in the groups of two graphs (a module used by the model and traced on its own)
  // cannot be cut for one of them alone.
  std::map<std::pair<std::string, std::int64_t>, std::vector<std::pair<std::size_t, std::int64_t>>> uses;
  for (std::size_t k = 0; k < result.groups.size(); ++k) {
    ChannelGroup& g = result.groups[k];
    for (const GroupMember& m : g.members) {
      auto& seen = uses[{m.tensor, m.dim}];
      for (const auto& [other, offset] : seen) {
        ChannelGroup& h = result.groups[other];
        if (other == k || h.graph == g.graph || !(m.offset < offset + h.channels * h.width && offset < m.offset + g.channels * g.width))
          continue;
        for (ChannelGroup* x : {&g, &h}) {
          if (!x->prunable) continue;
          x->prunable = false;
          x->reason = fmt::format("'{}' is also in a group of another graph", m.tensor);
        }
      }
      seen.emplace_back(k, m.offset);
    }
  }
  // The layers each failed module hides: every layer of its subtree (a module owning an `out`
  // member somewhere) whose output channels no prunable group holds, in the model's order.
  std::unordered_map<std::string, bool> layers;  // layer module -> its output channels are prunable
  for (const ChannelGroup& g : result.groups) {
    for (const std::string& producer : g.producers()) layers[producer] = layers[producer] || g.prunable;
  }
  const std::vector<NamedModule> modules = model.named_modules();
  for (const ModuleFailure& f : collection.failures()) {
    HiddenLayers h{f.module, f.type, {}};
    const std::string prefix = f.module.empty() ? std::string() : f.module + ".";
    for (const NamedModule& m : modules) {
      if (!m.path.starts_with(prefix) || m.path == f.module) continue;
      auto it = layers.find(m.path);
      if (it != layers.end() && !it->second) h.layers.push_back(m.path);
    }
    result.hidden.push_back(std::move(h));
  }
  return result;
}

}  // namespace symtrace
