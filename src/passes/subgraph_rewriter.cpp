// The subgraph rewriter: an anchored matcher (each graph node tried as the pattern's result,
// the pattern's operands matched backwards through the arguments), then replacement.
#include "symtrace/passes/subgraph_rewriter.hpp"

#include "symtrace/core/error.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace symtrace {

namespace {

/// The pattern's result node, after checking the pattern's shape.
const Node& pattern_result(const Graph& pattern, const char* what, std::source_location where) {
  const Node* output = pattern.output_node();
  if (output == nullptr || output->args().size() != 1 || !output->args()[0].is_node()) {
    throw_invalid_argument(where, "the {} graph must end with an output returning one node (got {})", what,
                           output == nullptr ? std::string("no output") : to_string(output->args()[0]));
  }
  return pattern.node(*output->args()[0].get_if<NodeId>(), where);
}

std::vector<const Node*> placeholders(const Graph& g) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes()) {
    if (n.op() == OpKind::placeholder) out.push_back(&n);
  }
  return out;
}

/// One attempt to match the pattern at one anchor.
class Matcher {
 public:
  Matcher(const Graph& graph, const Graph& pattern) : graph_(graph), pattern_(pattern) {}

  bool match(const Node& p, Node& g) {
    if (p.op() == OpKind::placeholder) {
      auto [it, inserted] = bound_.try_emplace(&p, &g);
      return inserted || it->second == &g;
    }
    if (auto it = matched_.find(&p); it != matched_.end()) return it->second == &g;
    if (p.op() != g.op() || p.target() != g.target() || p.args().size() != g.args().size() ||
        p.kwargs().size() != g.kwargs().size()) {
      return false;
    }
    for (const auto& [node, other] : matched_) {
      if (other == &g) return false;  // two pattern nodes cannot be one graph node
    }
    matched_.emplace(&p, &g);
    for (std::size_t i = 0; i < p.args().size(); ++i) {
      if (!match_argument(p.args()[i], g.args()[i])) return false;
    }
    for (std::size_t i = 0; i < p.kwargs().size(); ++i) {
      if (p.kwargs()[i].first != g.kwargs()[i].first || !match_argument(p.kwargs()[i].second, g.kwargs()[i].second)) {
        return false;
      }
    }
    return true;
  }

  const std::unordered_map<const Node*, Node*>& matched() const { return matched_; }
  Node* bound(const Node& placeholder) const {
    auto it = bound_.find(&placeholder);
    return it == bound_.end() ? nullptr : it->second;
  }

 private:
  bool match_argument(const Argument& p, const Argument& g) {
    if (const NodeId* pid = p.get_if<NodeId>()) {
      const NodeId* gid = g.get_if<NodeId>();
      Node* gn = gid ? graph_.find_node(*gid) : nullptr;
      const Node* pn = pattern_.find_node(*pid);
      return gn != nullptr && pn != nullptr && match(*pn, *gn);
    }
    if (const ArgumentList* pl = p.get_if<ArgumentList>()) {
      const ArgumentList* gl = g.get_if<ArgumentList>();
      if (gl == nullptr || gl->size() != pl->size()) return false;
      for (std::size_t i = 0; i < pl->size(); ++i) {
        if (!match_argument((*pl)[i], (*gl)[i])) return false;
      }
      return true;
    }
    return p == g;
  }

  const Graph& graph_;
  const Graph& pattern_;
  std::unordered_map<const Node*, Node*> matched_;  // pattern operation -> graph node
  std::unordered_map<const Node*, Node*> bound_;    // pattern placeholder -> graph node
};

}  // namespace

std::vector<PatternMatch> find_pattern(const Graph& graph, const Graph& pattern, std::source_location where) {
  const Node& result = pattern_result(pattern, "pattern", where);
  if (result.op() == OpKind::placeholder) {
    throw_invalid_argument(where, "the pattern returns its placeholder %{}: it would match every node; give it an "
                                  "operation to match",
                           result.name());
  }
  const std::vector<const Node*> inputs = placeholders(pattern);
  std::vector<const Node*> operations;
  for (const Node& n : pattern.nodes()) {
    if (n.op() != OpKind::placeholder && n.op() != OpKind::output) operations.push_back(&n);
  }
  std::vector<PatternMatch> matches;
  std::unordered_set<const Node*> taken;
  for (Node& anchor : graph.nodes()) {
    if (anchor.op() != result.op() || anchor.target() != result.target() || taken.contains(&anchor)) continue;
    Matcher m(graph, pattern);
    if (!m.match(result, anchor)) continue;
    // Every pattern operation must be part of the match (a pattern node the result does not
    // depend on cannot be matched from the anchor), used only inside it, and not taken.
    bool ok = m.matched().size() == operations.size();
    std::unordered_set<const Node*> inside;
    for (const auto& [p, g] : m.matched()) inside.insert(g);
    for (const auto& [p, g] : m.matched()) {
      if (!ok) break;
      if (taken.contains(g)) ok = false;
      if (g == &anchor) continue;
      for (const Node* user : g->users()) {
        if (!inside.contains(user)) ok = false;
      }
    }
    if (!ok) continue;
    PatternMatch match;
    match.anchor = &anchor;
    for (const Node* p : operations) match.nodes.push_back(m.matched().at(p));
    for (const Node* p : inputs) match.inputs.push_back(m.bound(*p));
    if (std::find(match.inputs.begin(), match.inputs.end(), nullptr) != match.inputs.end()) continue;  // unused placeholder
    for (Node* g : match.nodes) taken.insert(g);
    matches.push_back(std::move(match));
  }
  return matches;
}

std::size_t replace_pattern(Graph& graph, const Graph& pattern, const Graph& replacement, std::source_location where) {
  const Node& result = pattern_result(replacement, "replacement", where);
  const std::vector<const Node*> inputs = placeholders(replacement);
  if (inputs.size() != placeholders(pattern).size()) {
    throw_invalid_argument(where, "the replacement takes {} inputs and the pattern {}; give them the same placeholders, "
                                  "in the same order",
                           inputs.size(), placeholders(pattern).size());
  }
  const std::vector<PatternMatch> matches = find_pattern(graph, pattern, where);
  if (matches.empty()) return 0;
  Graph::Checkpoint checkpoint = graph.checkpoint();
  // A match may take the result of an earlier one as input: that anchor is gone by then.
  std::unordered_map<const Node*, Node*> replaced_by;
  for (const PatternMatch& match : matches) {
    std::unordered_map<std::uint32_t, NodeId> copied;  // replacement node id -> graph node id
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const Node* input = match.inputs[i];
      for (auto it = replaced_by.find(input); it != replaced_by.end(); it = replaced_by.find(input)) input = it->second;
      copied.emplace(inputs[i]->id().value, input->id());
    }
    auto remap = [&](const Argument& a) {
      return map_nodes(a, [&](NodeId id) -> Argument { return Argument(copied.at(id.value)); });
    };
    Node* value = nullptr;
    {
      auto at = graph.inserting_before(*match.anchor);
      for (const Node& r : replacement.nodes()) {
        if (r.op() == OpKind::placeholder || r.op() == OpKind::output) continue;
        Arguments args;
        for (const Argument& a : r.args()) args.push_back(remap(a));
        KeywordArguments kwargs;
        for (const auto& [key, a] : r.kwargs()) kwargs.emplace_back(key, remap(a));
        Node& n = graph.create_node(r.op(), r.target(), std::move(args), std::move(kwargs), {}, match.anchor->where());
        n.set_scope(match.anchor->scope());
        if (r.tensor_meta() != nullptr) n.set_tensor_meta(*r.tensor_meta());
        copied.emplace(r.id().value, n.id());
        if (&r == &result) value = &n;
      }
    }
    if (value != nullptr) {
      if (const TensorMeta* meta = match.anchor->tensor_meta()) value->set_tensor_meta(*meta);
    } else {
      value = &graph.node(copied.at(result.id().value));  // the replacement returns an input as it is
    }
    graph.replace_all_uses_with(*match.anchor, *value);
    replaced_by.emplace(match.anchor, value);
    // The matched nodes are used only inside the match: erase each once its users are gone.
    std::vector<Node*> doomed = match.nodes;
    while (!doomed.empty()) {
      auto unused = std::find_if(doomed.begin(), doomed.end(), [](const Node* n) { return n->num_users() == 0; });
      if (unused == doomed.end()) throw InternalError("internal error: replace_pattern: a matched node kept a user");
      graph.erase_node(**unused);
      doomed.erase(unused);
    }
  }
  checkpoint.commit();
  return matches.size();
}

}  // namespace symtrace
