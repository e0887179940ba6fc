// Graph: the public face of GraphImpl. Checks that nodes handed in belong to this graph and
// are alive, then forwards.
#include "symtrace/graph/graph.hpp"

#include "symtrace/core/error.hpp"
#include "graph_impl.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace symtrace {
namespace {

void check_node(const detail::GraphImpl& impl, const Node& node, std::string_view what,
                std::source_location where) {
  if (!impl.owns(node)) {
    throw_invalid_argument(where, "{}: %{} is not a node of this graph; pass nodes of this graph only", what,
                           node.name());
  }
  if (impl.live_node(node.id()) != &node) {
    throw_invalid_argument(where, "{}: %{} was erased from this graph; use a live node (erased nodes stay "
                                  "erased unless a checkpoint rolls the erasure back)",
                           what, node.name());
  }
}

}  // namespace

Graph::Graph() : impl_(std::make_shared<detail::GraphImpl>(this)) {}
Graph::~Graph() = default;

Graph::Graph(const Graph& other) : impl_(std::make_shared<detail::GraphImpl>(other.impl(), this)) {}

Graph& Graph::operator=(const Graph& other) {
  if (this != &other) impl_ = std::make_shared<detail::GraphImpl>(other.impl(), this);
  return *this;
}

Graph::Graph(Graph&& other) noexcept : impl_(std::move(other.impl_)) {
  if (impl_) impl_->owner = this;
}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    impl_ = std::move(other.impl_);
    if (impl_) impl_->owner = this;
  }
  return *this;
}

detail::GraphImpl& Graph::impl() const {
  if (!impl_) impl_ = std::make_shared<detail::GraphImpl>(const_cast<Graph*>(this));
  return *impl_;
}

Node& Graph::create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                         std::string_view name, std::source_location where) {
  return impl().create_node(op, target, std::move(args), std::move(kwargs), name, where);
}

Node& Graph::placeholder(std::string_view name, std::source_location where) {
  return impl().create_node(OpKind::placeholder, name, {}, {}, name, where);
}

Node& Graph::get_attr(std::string_view qualified_name, std::source_location where) {
  return impl().create_node(OpKind::get_attr, qualified_name, {}, {}, {}, where);
}

Node& Graph::call_function(std::string_view target, Arguments args, KeywordArguments kwargs,
                           std::source_location where) {
  return impl().create_node(OpKind::call_function, target, std::move(args), std::move(kwargs), {}, where);
}

Node& Graph::call_method(std::string_view target, Arguments args, KeywordArguments kwargs,
                         std::source_location where) {
  return impl().create_node(OpKind::call_method, target, std::move(args), std::move(kwargs), {}, where);
}

Node& Graph::call_module(std::string_view module_path, Arguments args, KeywordArguments kwargs,
                         std::source_location where) {
  return impl().create_node(OpKind::call_module, module_path, std::move(args), std::move(kwargs), {}, where);
}

Node& Graph::output(Argument result, std::source_location where) {
  Arguments args;
  args.push_back(std::move(result));
  return impl().create_node(OpKind::output, "output", std::move(args), {}, "output", where);
}

Graph::InsertPoint Graph::inserting_before(Node& anchor, std::source_location where) {
  detail::GraphImpl& g = impl();
  check_node(g, anchor, "inserting_before", where);
  auto [mode, old_anchor] = g.insert_point();
  g.set_insert_point(detail::GraphImpl::before, anchor.id());
  return InsertPoint(impl_, mode, old_anchor);
}

Graph::InsertPoint Graph::inserting_after(Node& anchor, std::source_location where) {
  detail::GraphImpl& g = impl();
  check_node(g, anchor, "inserting_after", where);
  auto [mode, old_anchor] = g.insert_point();
  g.set_insert_point(detail::GraphImpl::after, anchor.id());
  return InsertPoint(impl_, mode, old_anchor);
}

Graph::InsertPoint::~InsertPoint() {
  if (auto graph = graph_.lock()) graph->set_insert_point(mode_, anchor_);
}

void Graph::move_before(Node& node, Node& anchor, std::source_location where) {
  detail::GraphImpl& g = impl();
  check_node(g, node, "move_before", where);
  check_node(g, anchor, "move_before", where);
  g.move_node(node, anchor, false, where);
}

void Graph::move_after(Node& node, Node& anchor, std::source_location where) {
  detail::GraphImpl& g = impl();
  check_node(g, node, "move_after", where);
  check_node(g, anchor, "move_after", where);
  g.move_node(node, anchor, true, where);
}

NodeRange Graph::nodes() const noexcept {
  if (!impl_ || !impl_->head.is_valid()) return NodeRange(nullptr, nullptr, false);
  return NodeRange(&impl_->slot(impl_->head), &impl_->slot(impl_->tail), false);
}

std::size_t Graph::size() const noexcept { return impl_ ? impl_->live_count : 0; }

namespace {
constexpr std::string_view constant_prefix = "_tensor_constant";
}  // namespace

ScopeId Graph::intern_scope(std::string_view scope) { return ScopeId{impl().intern_scope(scope)}; }

ScopeId Graph::child_scope(ScopeId parent, std::string_view name, std::source_location where) {
  return ScopeId{impl().child_scope(static_cast<std::uint32_t>(parent), name, where)};
}

std::string Graph::add_constant(Tensor value) {
  if (!value.defined()) throw std::invalid_argument("Graph::add_constant: the tensor is undefined");
  std::vector<Tensor>& constants = impl().constants;
  std::string name = fmt::format("{}{}", constant_prefix, constants.size());
  constants.push_back(std::move(value));
  return name;
}

const Tensor* Graph::find_constant(std::string_view name) const noexcept {
  if (!impl_ || !name.starts_with(constant_prefix)) return nullptr;
  std::string_view digits = name.substr(constant_prefix.size());
  if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return nullptr;
  std::size_t index = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return nullptr;
    index = index * 10 + static_cast<std::size_t>(c - '0');
  }
  return index < impl_->constants.size() ? &impl_->constants[index] : nullptr;
}

std::string Graph::add_subgraph(std::string_view base, Graph subgraph) {
  auto& subgraphs = impl().subgraphs;
  // Subgraphs are few (one pair per cond): counting those of the same base is cheap.
  std::size_t index = 0;
  for (const auto& [name, graph] : subgraphs) {
    if (name.size() > base.size() && name.starts_with(base) && name[base.size()] == '_') ++index;
  }
  std::string name = fmt::format("{}_{}", base, index);
  subgraphs.emplace_back(name, std::make_shared<const Graph>(std::move(subgraph)));
  return name;
}

const Graph* Graph::find_subgraph(std::string_view name) const noexcept {
  if (!impl_) return nullptr;
  for (const auto& [n, graph] : impl_->subgraphs) {
    if (n == name) return graph.get();
  }
  return nullptr;
}

const std::vector<std::pair<std::string, std::shared_ptr<const Graph>>>& Graph::subgraphs() const noexcept {
  static const std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> none;
  return impl_ ? impl_->subgraphs : none;
}

void Graph::add_guard(std::string input, Argument value) {
  impl().guards.push_back(Guard{std::move(input), std::move(value)});
}

void Graph::add_size_guard(const SymFact& fact, std::source_location where) {
  const SymFact f = fact.normalized();
  detail::GraphImpl& g = impl();
  if (!g.size_guard_keys.insert(detail::size_guard_key(f)).second) return;
  try {
    g.size_guards.push_back(SizeGuard{f, where});
  } catch (...) {
    g.size_guard_keys.erase(detail::size_guard_key(f));
    throw;
  }
}

const std::vector<Graph::SizeGuard>& Graph::size_guards() const noexcept {
  static const std::vector<SizeGuard> none;
  return impl_ ? impl_->size_guards : none;
}

const std::vector<Graph::Guard>& Graph::guards() const noexcept {
  static const std::vector<Guard> none;
  return impl_ ? impl_->guards : none;
}

std::size_t Graph::num_constants() const noexcept { return impl_ ? impl_->constants.size() : 0; }
std::uint32_t Graph::id_bound() const noexcept {
  return impl_ ? static_cast<std::uint32_t>(impl_->num_slots()) : 0;
}

Node* Graph::find_node(std::string_view name) const noexcept { return impl_ ? impl_->find_node(name) : nullptr; }

Node* Graph::find_node(NodeId id) const noexcept { return impl_ ? impl_->live_node(id) : nullptr; }

Node& Graph::node(NodeId id, std::source_location where) const {
  Node* node = find_node(id);
  if (node == nullptr) {
    throw_invalid_argument(where, "node({}): no live node has this id in this graph; use find_node(id) to test for one",
                           id);
  }
  return *node;
}

Node* Graph::output_node() const noexcept { return impl_ ? impl_->live_node(impl_->output) : nullptr; }

void Graph::erase_node(Node& node, std::source_location where) {
  detail::GraphImpl& g = impl();
  check_node(g, node, "erase_node", where);
  g.erase_node(node, where);
}

std::size_t Graph::replace_all_uses_with(Node& old_node, Node& replacement, std::source_location where) {
  detail::GraphImpl& g = impl();
  check_node(g, old_node, "replace_all_uses_with", where);
  check_node(g, replacement, "replace_all_uses_with", where);
  return g.replace_all_uses_with(old_node, replacement, where);
}

std::size_t Graph::eliminate_dead_code() { return impl().eliminate_dead_code(); }

void Graph::lint() const { impl().lint(); }

Graph::Checkpoint Graph::checkpoint() {
  std::uint64_t serial = impl().open_checkpoint();
  return Checkpoint(impl_, serial);
}

Graph::Checkpoint::~Checkpoint() {
  if (auto graph = graph_.lock()) graph->rollback(serial_);
}

void Graph::Checkpoint::commit() {
  if (auto graph = graph_.lock()) {
    if (graph->is_open(serial_) && !graph->is_innermost(serial_)) {
      throw std::logic_error(
          "Graph::Checkpoint::commit: checkpoints taken after this one are still open; commit or roll "
          "them back first (checkpoints end in the reverse order they were taken)");
    }
    graph->commit(serial_);
  }
  graph_.reset();
}

void Graph::Checkpoint::rollback() {
  if (auto graph = graph_.lock()) graph->rollback(serial_);
  graph_.reset();
}

bool Graph::Checkpoint::active() const noexcept {
  auto graph = graph_.lock();
  return graph && graph->is_open(serial_);
}

}  // namespace symtrace
