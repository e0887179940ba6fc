// Node: queries read the node and its graph's tables; mutations go through GraphImpl, which
// keeps users in step and records undo information.
#include "symtrace/graph/node.hpp"

#include "graph_impl.hpp"

#include "symtrace/core/error.hpp"

#include <algorithm>

namespace symtrace {
namespace {
const KeywordArguments empty_kwargs;
const MetaEntries empty_entries;
}  // namespace

Node::Node() noexcept = default;
Node::~Node() = default;

std::string Node::name() const { return graph_->name(*this); }

const KeywordArguments& Node::kwargs() const noexcept { return cold_ ? cold_->kwargs : empty_kwargs; }

const Argument* Node::kwarg(std::string_view key) const noexcept {
  for (const auto& [k, v] : kwargs()) {
    if (k == key) return &v;
  }
  return nullptr;
}

Graph& Node::graph() const noexcept { return *graph_->owner; }

namespace {
/// The nearest live node from `id` on, following `link` (prev_ or next_) past erased nodes.
Node* nearest_live(detail::GraphImpl& graph, NodeId id, NodeId Node::*link) noexcept {
  while (id.is_valid() && id.value < graph.num_slots()) {
    Node& node = graph.slot(id);
    if (graph.live_node(id) == &node) return &node;
    id = node.*link;
  }
  return nullptr;
}
}  // namespace

Node* Node::prev() const noexcept { return nearest_live(*graph_, prev_, &Node::prev_); }

Node* Node::next() const noexcept { return nearest_live(*graph_, next_, &Node::next_); }

std::vector<Node*> Node::users() const { return graph_->users(*this); }

std::size_t Node::num_users() const noexcept { return graph_->num_users(*this); }

std::vector<Node*> Node::input_nodes() const {
  std::vector<Node*> inputs;
  for (NodeId id : detail::node_refs(args_, kwargs())) {
    Node* input = &graph_->slot(id);
    if (std::find(inputs.begin(), inputs.end(), input) == inputs.end()) inputs.push_back(input);
  }
  return inputs;
}

Node* Node::arg_node(std::size_t index) const noexcept {
  if (index >= args_.size()) return nullptr;
  const NodeId* id = boost::variant2::get_if<NodeId>(&args_[index].value);
  return id != nullptr ? &graph_->slot(*id) : nullptr;
}

Node* Node::kwarg_node(std::string_view key) const noexcept {
  const Argument* a = kwarg(key);
  const NodeId* id = a != nullptr ? boost::variant2::get_if<NodeId>(&a->value) : nullptr;
  return id != nullptr ? &graph_->slot(*id) : nullptr;
}

std::string_view Node::scope() const noexcept { return graph_->scope_text(scope_); }

const MetaEntries& Node::meta() const noexcept { return cold_ ? cold_->entries : empty_entries; }

const Argument* Node::meta(std::string_view key) const noexcept {
  for (const auto& [k, v] : meta()) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool Node::is_impure() const noexcept {
  if (op_ == OpKind::placeholder || op_ == OpKind::output || (flags_ & impure) != 0) return true;
  if (op_ != OpKind::call_function && op_ != OpKind::call_method) return false;
  std::string_view t = target();
  return t.size() > 1 && t.back() == '_' && !t.ends_with("__");  // add_, relu_, copy_
}

void Node::set_args(Arguments args, std::source_location where) {
  graph_->set_inputs(*this, std::move(args), kwargs(), where);
}

void Node::set_kwargs(KeywordArguments kwargs, std::source_location where) {
  graph_->set_inputs(*this, args_, std::move(kwargs), where);
}

void Node::replace_input_with(const Node& old_input, const Node& new_input, std::source_location where) {
  for (const Node* n : {&old_input, &new_input}) {
    if (!graph_->owns(*n)) {
      throw_invalid_argument(where, "replace_input_with: %{} is not a node of the graph of %{}; pass nodes of "
                                    "the same graph",
                             n->name(), name());
    }
  }
  auto swap_input = [&](NodeId id) { return id == old_input.id_ ? new_input.id_ : id; };
  Arguments args;
  args.reserve(args_.size());
  for (const Argument& a : args_) args.push_back(map_nodes(a, swap_input));
  KeywordArguments kw;
  for (const auto& [key, a] : kwargs()) kw.emplace_back(key, map_nodes(a, swap_input));
  graph_->set_inputs(*this, std::move(args), std::move(kw), where);
}

void Node::set_tensor_meta(const std::optional<TensorMeta>& meta) {
  graph_->set_meta(*this, true, meta ? &*meta : nullptr, nullptr, nullptr, nullptr);
}

void Node::set_tensor_meta(const TensorMeta& meta) { graph_->set_meta(*this, true, &meta, nullptr, nullptr, nullptr); }

void Node::set_scope(std::string_view scope) { graph_->set_meta(*this, false, nullptr, &scope, nullptr, nullptr); }

void Node::set_scope(ScopeId scope, std::source_location where) {
  graph_->set_scope(*this, static_cast<std::uint32_t>(scope), where);
}

void Node::set_where(std::source_location where) { graph_->set_meta(*this, false, nullptr, nullptr, &where, nullptr); }

void Node::set_meta(std::string_view key, Argument value) {
  MetaEntries& entries = graph_->entries_for_update(*this);
  for (auto& [k, v] : entries) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::string(key), std::move(value));
}

bool Node::erase_meta(std::string_view key) {
  if (meta(key) == nullptr) return false;
  MetaEntries& entries = graph_->entries_for_update(*this);
  entries.erase(std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.first == key; }));
  return true;
}

void Node::set_impure(bool value) {
  auto flags = static_cast<std::uint8_t>(value ? (flags_ | impure) : (flags_ & ~impure));
  graph_->set_meta(*this, false, nullptr, nullptr, nullptr, &flags);
}

}  // namespace symtrace
