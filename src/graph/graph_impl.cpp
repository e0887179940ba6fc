// GraphImpl's mutations: creating, rewiring, moving and erasing nodes, with the undo records
// a checkpoint needs (see checkpoint.cpp for rollback), and the deep copy of a graph.
#include "graph_impl.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>

namespace symtrace::detail {
namespace {

constexpr std::size_t max_target_size = 0xffff;

/// fx's `_snake_case`: an upper-case letter after a lower-case one starts a new word.
void append_snake_case(std::string& out, std::string_view text) {
  bool prev_lower = false;
  for (char c : text) {
    bool upper = c >= 'A' && c <= 'Z';
    if (prev_lower && upper) out += '_';
    out += upper ? static_cast<char>(c - 'A' + 'a') : c;
    prev_lower = c >= 'a' && c <= 'z';
  }
}

/// The name fx gives a node when none is asked for: the target, without dunder marks, in
/// snake case (`__add__` gives `add`, `layer1.0.conv1` gives `layer1_0_conv1` once sanitised).
/// A function is named without its qualifier, as fx names it by `__name__`
/// (`operator.mul` gives `mul`), and an operator without its namespace and overload
/// (`aten::add.Tensor` gives `add`).
std::string_view default_name(OpKind op, std::string_view target, std::string& buffer) {
  if (op == OpKind::output) return "output";
  if (target.empty()) return op == OpKind::call_module ? "root" : "_unnamed";  // the root module's path is ""
  if (op == OpKind::call_function) {
    if (const std::size_t ns = target.find("::"); ns != std::string_view::npos && ns + 2 < target.size()) {
      // An operator of another library by its qualified name and overload (`aten::add.Tensor`
      // gives `add`), as fx names a call of torch.ops.aten.add.Tensor.
      target = target.substr(ns + 2);
      target = target.substr(0, target.find('.'));
    } else if (const std::size_t dot = target.rfind('.'); dot != std::string_view::npos && dot + 1 < target.size()) {
      target = target.substr(dot + 1);
    }
  }
  if (target.size() > 4 && target.starts_with("__") && target.ends_with("__")) {
    target = target.substr(2, target.size() - 4);
  }
  bool has_upper = std::any_of(target.begin(), target.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  if (!has_upper) return target;
  buffer.clear();
  append_snake_case(buffer, target);
  return buffer;
}

}  // namespace

// ---- Interning tables ----------------------------------------------------------------------

std::size_t MetaTable::Hash::operator()(const TensorMeta& m) const noexcept {
  std::size_t h = static_cast<std::size_t>(m.dtype) * 0x9e3779b97f4a7c15ULL;
  for (Dim d : m.shape) h = (h ^ static_cast<std::size_t>(d.raw())) * 0x100000001b3ULL;
  return h ^ m.shape.rank();
}

const TensorMeta* MetaTable::intern(const TensorMeta& meta) {
  if (last_ == nullptr || !(*last_ == meta)) last_ = &*metas_.insert(meta).first;
  return last_;
}

// Note [Scopes as prefixes]: every node keeps the path of the module that recorded it, and a
// module d deep has a path of d components. Stored and hashed as whole texts, the scopes of a
// chain of n nested modules cost O(n^2) in time and memory. So a scope made by child(parent,
// name), as the tracer makes them, costs O(|name|): its hash combines its parent's with its
// name's, a candidate in the index is compared by parent and name, and its text is stored
// right after its parent's when that is the last text stored (a chain's scopes then share one
// text, each a prefix of the next); otherwise it is a copy. intern(text) hashes the text
// component by component, so both find the same scope.

ScopeTable::ScopeTable(const ScopeTable& other) : used_(other.used_), entries_(other.entries_), index_(other.index_), last_index_(0) {
  blocks_.reserve(other.blocks_.size());
  for (std::size_t b = 0; b < other.blocks_.size(); ++b) {
    const Block& from = other.blocks_[b];
    const std::size_t filled = b + 1 == other.blocks_.size() ? other.used_ : from.capacity;
    Block copy{std::make_unique_for_overwrite<char[]>(from.capacity), from.capacity};
    std::memcpy(copy.data.get(), from.data.get(), filled);
    blocks_.push_back(std::move(copy));
  }
}

std::uint32_t ScopeTable::combine(std::uint32_t parent, std::string_view name) noexcept {
  std::uint64_t h = (static_cast<std::uint64_t>(parent) << 32 | TextIndex::hash_of(name)) * 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebULL;
  return static_cast<std::uint32_t>(h ^ (h >> 29));
}

ScopeTable::Entry ScopeTable::place(std::uint32_t prefix_scope, std::string_view prefix, std::string_view name) {
  const std::size_t size = prefix.size() + (prefix.empty() ? 0 : 1) + name.size();
  if (size > 0xffffffffU) throw std::length_error("a module scope longer than 4 GiB");
  if (prefix_scope != 0 && !blocks_.empty()) {
    const Entry& p = entries_[prefix_scope - 1];
    const Block& last = blocks_.back();
    if (p.block + 1 == blocks_.size() && p.offset + p.size == used_ && last.capacity - used_ >= size - prefix.size()) {
      char* out = last.data.get() + used_;
      *out = '.';
      std::memcpy(out + 1, name.data(), name.size());
      used_ += size - prefix.size();
      return Entry{p.block, p.offset, static_cast<std::uint32_t>(size), 0, 0};
    }
  }
  if (blocks_.empty() || blocks_.back().capacity - used_ < size) {
    const std::size_t capacity = std::max<std::size_t>(4096, 2 * size);
    blocks_.push_back(Block{std::make_unique_for_overwrite<char[]>(capacity), capacity});
    used_ = 0;
  }
  char* out = blocks_.back().data.get() + used_;
  if (!prefix.empty()) {  // an empty view's data() may be null, which memcpy must not get
    std::memcpy(out, prefix.data(), prefix.size());
    out[prefix.size()] = '.';
  }
  if (!name.empty()) std::memcpy(out + size - name.size(), name.data(), name.size());
  const Entry e{static_cast<std::uint32_t>(blocks_.size() - 1), static_cast<std::uint32_t>(used_), static_cast<std::uint32_t>(size), 0, 0};
  used_ += size;
  return e;
}

std::uint32_t ScopeTable::add(Entry entry, std::size_t slot) {
  const auto index = static_cast<std::uint32_t>(entries_.size());
  entries_.push_back(entry);  // capacity reserved by the caller: no throw
  index_.set(slot, entry.hash, index);
  last_index_ = index + 1;
  return last_index_;
}

std::uint32_t ScopeTable::intern(std::string_view scope) {
  if (scope.empty()) return 0;
  if (last_index_ != 0) {
    const std::string_view last = text(last_index_);
    if (scope.data() == last.data() && scope.size() == last.size()) return last_index_;  // our own text: no compare
    if (scope == last) return last_index_;
  }
  std::uint32_t hash = root_hash();
  for (std::size_t begin = 0;;) {
    const std::size_t dot = scope.find('.', begin);
    hash = combine(hash, scope.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
  const auto is = [&](std::uint32_t entry) { return text(entry + 1) == scope; };
  std::size_t at = index_.find_slot_if(hash, is);
  if (const std::uint32_t entry = index_.entry(at); entry != TextIndex::none) return last_index_ = entry + 1;
  // Room first (growing may throw, and then nothing has changed).
  if (entries_.size() == entries_.capacity()) entries_.reserve(std::max<std::size_t>(8, 2 * entries_.capacity()));
  if (index_.reserve_for(entries_.size() + 1)) at = index_.find_slot_if(hash, is);
  Entry e = place(0, {}, scope);
  e.parent = unknown_parent;
  e.hash = hash;
  return add(e, at);
}

std::uint32_t ScopeTable::child(std::uint32_t parent, std::string_view name) {
  const std::uint32_t hash = combine(this->hash(parent), name);
  const std::string_view prefix = text(parent);
  const std::size_t size = prefix.size() + (prefix.empty() ? 0 : 1) + name.size();
  const auto is = [&](std::uint32_t entry) {
    const Entry& e = entries_[entry];
    if (e.size != size) return false;
    const std::string_view t = text(entry + 1);
    if (t.substr(size - name.size()) != name) return false;
    if (e.parent == parent) return true;
    return e.parent == unknown_parent && t.substr(0, prefix.size()) == prefix;  // made by intern(text)
  };
  std::size_t at = index_.find_slot_if(hash, is);
  if (const std::uint32_t entry = index_.entry(at); entry != TextIndex::none) return last_index_ = entry + 1;
  if (entries_.size() == entries_.capacity()) entries_.reserve(std::max<std::size_t>(8, 2 * entries_.capacity()));
  if (index_.reserve_for(entries_.size() + 1)) at = index_.find_slot_if(hash, is);
  Entry e = place(parent, prefix, name);
  e.parent = parent;
  e.hash = hash;
  return add(e, at);
}

std::vector<NodeId> node_refs(const Arguments& args, const KeywordArguments& kwargs) {
  std::vector<NodeId> refs;
  for_each_node(args, kwargs, [&](NodeId id) { refs.push_back(id); });
  return refs;
}

// ---- Construction --------------------------------------------------------------------------

GraphImpl::GraphImpl(Graph* owner_graph) : owner(owner_graph) {}

GraphImpl::GraphImpl(const GraphImpl& other, Graph* owner_graph)
    : owner(owner_graph), constants(other.constants), guards(other.guards), size_guards(other.size_guards), size_guard_keys(other.size_guard_keys), subgraphs(other.subgraphs), names_(other.names_, arena_), scopes_(other.scopes_) {
  copy_nodes(other);
}

void GraphImpl::copy_nodes(const GraphImpl& other) {
  for (std::size_t i = 0; i < other.num_slots(); ++i) {
    const VertexSlot& from_slot = other.slots_[i];
    VertexSlot& to_slot = slots_.emplace_back();
    to_slot.uses = from_slot.uses;  // the same order, so users() lists users in the same order
    const Node& from = from_slot.node;
    Node& to = to_slot.node;
    to.graph_ = this;
    std::string_view target = arena_.store(from.target());
    to.target_ = target.data() != nullptr ? target.data() : "";
    to.target_size_ = from.target_size_;
    to.op_ = from.op_;
    to.flags_ = from.flags_;
    to.id_ = from.id_;
    to.name_base_ = from.name_base_;
    to.name_code_ = from.name_code_;
    to.prev_ = from.prev_;
    to.next_ = from.next_;
    to.scope_ = from.scope_;
    to.where_ = from.where_;
    if (from.tensor_meta_ != nullptr) to.tensor_meta_ = metas_.intern(*from.tensor_meta_);
    if ((from.flags_ & Node::live) != 0) {
      to.args_ = from.args_;
      if (from.cold_) to.cold_ = std::make_unique<NodeCold>(*from.cold_);
    }
  }
  head = other.head;
  tail = other.tail;
  output = other.output;
  live_count = other.live_count;
}

GraphImpl::~GraphImpl() = default;

Node* GraphImpl::live_node(NodeId id) noexcept {
  if (id.value >= num_slots()) return nullptr;
  Node& node = slot(id);
  return (node.flags_ & Node::live) != 0 ? &node : nullptr;
}

const Node* GraphImpl::live_node(NodeId id) const noexcept {
  return const_cast<GraphImpl*>(this)->live_node(id);
}

Node* GraphImpl::find_node(std::string_view name) noexcept { return live_node(names_.find(name)); }

// ---- Uses and order ------------------------------------------------------------------------

void GraphImpl::add_uses(const Node& node) {
  std::uint32_t position = 0;
  auto add = [&](NodeId input) { slots_[input.value].uses.push_back(StoredUse{node.id_.value, position++}); };
  for (const Argument& a : node.args_) for_each_node(a, add);
  if (node.cold_) {
    for (const auto& [key, a] : node.cold_->kwargs) for_each_node(a, add);
  }
}

std::vector<NodeId> GraphImpl::distinct_inputs(const Node& node) const {
  std::vector<NodeId> inputs = node_refs(node.args_, node.kwargs());
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  return inputs;
}

namespace {

/// The run of uses by `user` in `uses`, as [first, last) indices (first == size when none).
/// The most recent user's run is at the end (creation appends it; rollback removes it), so
/// look there first, then scan from the front.
std::pair<std::size_t, std::size_t> find_run(const UseList& uses, std::uint32_t user) noexcept {
  std::size_t last = uses.size();
  if (last > 0 && uses[last - 1].user == user) {
    std::size_t first = last - 1;
    while (first > 0 && uses[first - 1].user == user) --first;
    return {first, last};
  }
  std::size_t first = 0;
  while (first < uses.size() && uses[first].user != user) ++first;
  last = first;
  while (last < uses.size() && uses[last].user == user) ++last;
  return {first, last};
}

}  // namespace

void GraphImpl::rewrite_run(NodeId input, NodeId user, const std::vector<std::uint32_t>& positions, bool log) {
  UseList& edges = slots_[input.value].uses;
  auto [first, last] = find_run(edges, user.value);
  // Everything that can throw happens before the list changes: the capacity, the undo record.
  edges.reserve(edges.size() - (last - first) + positions.size());
  if (log) {
    // The old uses are copied into the record, so that undoing allocates nothing (Note [Rollback
    // cannot fail]); the log has room for the record (the caller reserved it).
    undo::RunChanged record{input, user, static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(positions.size()), {}};
    record.old_uses.assign(edges.begin() + static_cast<std::ptrdiff_t>(first),
                           edges.begin() + static_cast<std::ptrdiff_t>(last));
    log_.push_back(std::move(record));
  }
  auto at = edges.erase(edges.begin() + static_cast<std::ptrdiff_t>(first),
                        edges.begin() + static_cast<std::ptrdiff_t>(last));
  for (std::uint32_t pos : positions) at = edges.insert(at, StoredUse{user.value, pos}) + 1;  // within capacity
}

void GraphImpl::remove_uses(const Node& node) noexcept {
  // Allocates nothing (rollback runs it): each input's run of uses by `node` is erased where it
  // is; an input named twice finds its run already gone the second time.
  for_each_node(node.args_, node.kwargs(), [&](NodeId input) {
    UseList& edges = slots_[input.value].uses;
    auto [first, last] = find_run(edges, node.id_.value);
    edges.erase(edges.begin() + static_cast<std::ptrdiff_t>(first), edges.begin() + static_cast<std::ptrdiff_t>(last));
  });
}

void GraphImpl::undo_run(undo::RunChanged& r) noexcept {
  // The old uses come back as they were: no allocation. The list held them before, so its
  // capacity has room for them again.
  UseList& edges = slots_[r.input.value].uses;
  auto at = edges.erase(edges.begin() + r.offset, edges.begin() + r.offset + r.added);
  edges.insert(at, r.old_uses.begin(), r.old_uses.end());
  r.old_uses.clear();
}

void GraphImpl::link_after(Node& node, NodeId prev) noexcept {
  NodeId next = prev.is_valid() ? slot(prev).next_ : head;
  node.prev_ = prev;
  node.next_ = next;
  if (prev.is_valid()) {
    slot(prev).next_ = node.id_;
  } else {
    head = node.id_;
  }
  if (next.is_valid()) {
    slot(next).prev_ = node.id_;
  } else {
    tail = node.id_;
  }
}

void GraphImpl::unlink(Node& node) noexcept {
  if (node.prev_.is_valid()) {
    slot(node.prev_).next_ = node.next_;
  } else {
    head = node.next_;
  }
  if (node.next_.is_valid()) {
    slot(node.next_).prev_ = node.prev_;
  } else {
    tail = node.prev_;
  }
  // prev_/next_ are kept, so an iterator standing on an erased node can still advance.
}

// ---- Users ---------------------------------------------------------------------------------

std::vector<Node*> GraphImpl::users(const Node& node) {
  std::vector<Node*> result;
  std::uint32_t last = NodeId().value;
  for (const StoredUse& use : uses(node.id_)) {
    if (use.user == last) continue;
    last = use.user;
    result.push_back(&slot(NodeId(last)));
  }
  return result;
}

std::size_t GraphImpl::num_users(const Node& node) const noexcept {
  std::size_t count = 0;
  std::uint32_t last = NodeId().value;
  for (const StoredUse& use : uses(node.id_)) {
    if (use.user != last) ++count;
    last = use.user;
  }
  return count;
}

// ---- Creating nodes ------------------------------------------------------------------------

void GraphImpl::check_inputs(const Arguments& args, const KeywordArguments& kwargs, OpKind op,
                             std::string_view target, std::source_location where) const {
  std::uint32_t position = 0;
  auto check = [&](NodeId input) {
    if (live_node(input) == nullptr) {
      throw_invalid_argument(where,
                             "{}[target={}]: argument {} refers to node {}, which is not a node of this graph "
                             "(erased, rolled back, or from another graph); pass nodes of this graph only",
                             op, target, position, input);
    }
    ++position;
  };
  for (const Argument& a : args) for_each_node(a, check);
  for (std::size_t i = 0; i < kwargs.size(); ++i) {
    for_each_node(kwargs[i].second, check);
    for (std::size_t j = 0; j < i; ++j) {
      if (kwargs[j].first == kwargs[i].first) {
        throw_invalid_argument(where, "{}[target={}]: keyword argument '{}' is given twice; give each once", op,
                               target, kwargs[i].first);
      }
    }
  }
}

Node& GraphImpl::create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                             std::string_view name, std::source_location where) {
  // Validate everything first: a refused node leaves no trace.
  if (target.size() > max_target_size) {
    throw_invalid_argument(where, "{}: a target of {} characters is too long (at most {}); shorten the module path or "
                                  "op name",
                           op, target.size(), max_target_size);
  }
  if (op == OpKind::output) {
    if (output.is_valid()) {
      throw_invalid_argument(where,
                             "output: the graph already has an output node %{}; erase it or change its "
                             "arguments instead of adding another",
                             this->name(slot(output)));
    }
    if (args.size() != 1 || !kwargs.empty()) {
      throw_invalid_argument(where,
                             "output: takes exactly one argument and no keyword arguments (got {} and {}); "
                             "return several results as a list",
                             args.size(), kwargs.size());
    }
  }
  if (num_slots() >= NodeId::invalid_value) {
    throw_invalid_argument(where, "{}: the graph has {} nodes, the most a graph can hold", op, num_slots());
  }
  check_inputs(args, kwargs, op, target, where);
  Node* anchor = nullptr;
  if (point_mode_ != at_end) {
    anchor = live_node(point_anchor_);
    if (anchor == nullptr && point_mode_ == after) {
      // The last node made in an inserting_after scope was erased: go on after its nearest
      // live predecessor, which is where that node was.
      NodeId id = point_anchor_;
      while (id.is_valid() && id.value < num_slots() && anchor == nullptr) {
        id = slot(id).prev_;
        anchor = live_node(id);
      }
    }
    if (anchor == nullptr) {
      throw_invalid_argument(where,
                             "{}[target={}]: the insertion point's anchor node was erased; end the "
                             "inserting_before/inserting_after scope before erasing its anchor",
                             op, target);
    }
  }

  NodeId id(static_cast<std::uint32_t>(num_slots()));
  std::string buffer;
  NameTable::Request request;
  names_.prepare(name.empty() ? default_name(op, target, buffer) : name, request);
  // The name is taken last: its index slot comes in from memory meanwhile.
  // From here on every step is undone if a later one throws (only allocation can fail).
  bool added = false;
  bool linked = false;
  NameTable::Taken taken;
  try {
    if (logging()) reserve_log(1);
    std::string_view stored_target = arena_.store(target);
    slots_.emplace_back();
    added = true;
    Node& node = slot(id);
    node.graph_ = this;
    node.target_ = stored_target.data() != nullptr ? stored_target.data() : "";
    node.target_size_ = static_cast<std::uint16_t>(target.size());
    node.op_ = op;
    node.flags_ = Node::live;
    node.id_ = id;
    node.where_ = where;
    node.args_ = std::move(args);
    if (!kwargs.empty()) {
      node.cold_ = std::make_unique<NodeCold>();
      node.cold_->kwargs = std::move(kwargs);
    }
    if (anchor == nullptr) {
      // The end of the graph, before the output node if there is one.
      link_after(node, output.is_valid() ? slot(output).prev_ : tail);
    } else if (point_mode_ == before) {
      link_after(node, anchor->prev_);
    } else {
      link_after(node, anchor->id_);
    }
    linked = true;
    add_uses(node);
    taken = names_.take(request, id, arena_);  // the last step that may throw
    node.name_base_ = taken.base;
    node.name_code_ = taken.code;
  } catch (...) {
    if (added) {
      Node& node = slot(id);
      remove_uses(node);
      if (linked) unlink(node);
      slots_.pop_back();
    }
    throw;
  }
  if (point_mode_ == after) point_anchor_ = id;  // the next node goes after this one
  if (op == OpKind::output) output = id;
  ++live_count;
  if (logging()) log_.emplace_back(undo::Created{id, taken});  // capacity reserved: no throw
  return slot(id);
}

// ---- Rewiring ------------------------------------------------------------------------------

void GraphImpl::set_inputs(Node& node, Arguments args, KeywordArguments kwargs, std::source_location where) {
  if (live_node(node.id_) != &node) {
    throw_invalid_argument(where, "%{} was erased: an erased node's arguments cannot change (create a new node)",
                           name(node));
  }
  check_inputs(args, kwargs, node.op_, node.target(), where);
  if (node.op_ == OpKind::output && (args.size() != 1 || !kwargs.empty())) {
    throw_invalid_argument(where, "output: takes exactly one argument and no keyword arguments (got {} and {})",
                           args.size(), kwargs.size());
  }
  for (NodeId input : node_refs(args, kwargs)) {
    if (input == node.id_) {
      throw_invalid_argument(where, "%{}: a node cannot use itself as an argument", name(node));
    }
  }
  // Rewire each input's run of uses by this node in place, so a node that stays an input keeps
  // this user where it was in its users (fx's users dict keeps insertion order the same way).
  std::vector<NodeId> refs = node_refs(args, kwargs);
  std::vector<NodeId> inputs = distinct_inputs(node);
  inputs.insert(inputs.end(), refs.begin(), refs.end());
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  if (!kwargs.empty() && !node.cold_) node.cold_ = std::make_unique<NodeCold>();
  if (logging()) {
    reserve_log(inputs.size() + 1);
    log_.emplace_back(undo::ArgsChanged{node.id_, node.args_, node.kwargs()});
  }
  for (NodeId input : inputs) {
    std::vector<std::uint32_t> positions;
    for (std::uint32_t pos = 0; pos < refs.size(); ++pos) {
      if (refs[pos] == input) positions.push_back(pos);
    }
    rewrite_run(input, node.id_, positions, logging());
  }
  node.args_ = std::move(args);
  if (node.cold_) node.cold_->kwargs = std::move(kwargs);
}

std::size_t GraphImpl::replace_all_uses_with(Node& old_node, Node& replacement, std::source_location where) {
  if (&old_node == &replacement) return 0;
  std::size_t changed = 0;
  for (Node* user : users(old_node)) {
    if (user == &replacement) continue;  // replacement = f(old): keep its own use of old
    auto swap_input = [&](NodeId id) { return id == old_node.id_ ? replacement.id_ : id; };
    Arguments args;
    args.reserve(user->args_.size());
    for (const Argument& a : user->args_) args.push_back(map_nodes(a, swap_input));
    KeywordArguments kwargs;
    for (const auto& [key, a] : user->kwargs()) kwargs.emplace_back(key, map_nodes(a, swap_input));
    set_inputs(*user, std::move(args), std::move(kwargs), where);
    ++changed;
  }
  return changed;
}

void GraphImpl::move_node(Node& node, Node& anchor, bool after, std::source_location where) {
  if (&node == &anchor) {
    throw_invalid_argument(where, "%{}: a node cannot be moved next to itself", name(node));
  }
  if (needs_undo(node.id_)) log_.emplace_back(undo::Moved{node.id_, node.prev_});
  unlink(node);
  link_after(node, after ? anchor.id_ : anchor.prev_);
}

void GraphImpl::erase_node(Node& node, std::source_location where) {
  std::vector<Node*> node_users = users(node);
  if (!node_users.empty()) {
    std::string list;
    for (std::size_t i = 0; i < node_users.size() && i < 5; ++i) {
      if (i > 0) list += ", ";
      list += '%';
      append_name(list, *node_users[i]);
    }
    if (node_users.size() > 5) list += fmt::format(", ... ({} in all)", node_users.size());
    throw_invalid_argument(where,
                           "erase_node: %{} still has users ({}); replace its uses first "
                           "(replace_all_uses_with) or erase the users",
                           name(node), list);
  }
  std::vector<NodeId> inputs = distinct_inputs(node);
  if (logging()) reserve_log(inputs.size() + 1);
  for (NodeId input : inputs) rewrite_run(input, node.id_, {}, logging());
  if (logging()) log_.emplace_back(undo::Erased{node.id_, node.prev_});
  unlink(node);
  node.flags_ = static_cast<std::uint8_t>(node.flags_ & ~Node::live);
  if (output == node.id_) output = NodeId();
  --live_count;
  if (!logging()) {
    // Nothing can bring the node back: free what it holds (its name stays taken).
    Arguments().swap(node.args_);
    node.cold_.reset();
  }
}

// ---- Metadata ------------------------------------------------------------------------------

void GraphImpl::set_meta(Node& node, bool set_tensor_meta, const TensorMeta* tensor_meta, const std::string_view* scope,
                         const std::source_location* where, const std::uint8_t* flags) {
  const TensorMeta* new_meta = node.tensor_meta_;
  if (set_tensor_meta) new_meta = tensor_meta != nullptr ? metas_.intern(*tensor_meta) : nullptr;
  std::uint32_t new_scope = scope != nullptr ? scopes_.intern(*scope) : node.scope_;
  if (needs_undo(node.id_)) {
    log_.emplace_back(undo::MetaChanged{node.id_, node.tensor_meta_, node.scope_, node.where_, node.flags_});
  }
  node.tensor_meta_ = new_meta;
  node.scope_ = new_scope;
  if (where != nullptr) node.where_ = *where;
  if (flags != nullptr) node.flags_ = *flags;
}

void GraphImpl::set_scope(Node& node, std::uint32_t scope, std::source_location where) {
  if (scope >= scopes_.size()) {
    throw_invalid_argument(where, "Node::set_scope: scope {} is not a scope of this graph (it has {}); make it with "
                                  "Graph::intern_scope or Graph::child_scope of the same graph",
                           scope, scopes_.size());
  }
  if (needs_undo(node.id_)) {
    log_.emplace_back(undo::MetaChanged{node.id_, node.tensor_meta_, node.scope_, node.where_, node.flags_});
  }
  node.scope_ = scope;
}

std::uint32_t GraphImpl::child_scope(std::uint32_t parent, std::string_view name, std::source_location where) {
  if (parent >= scopes_.size()) {
    throw_invalid_argument(where, "Graph::child_scope: scope {} is not a scope of this graph (it has {})", parent,
                           scopes_.size());
  }
  return scopes_.child(parent, name);
}

MetaEntries& GraphImpl::entries_for_update(Node& node) {
  if (!node.cold_) node.cold_ = std::make_unique<NodeCold>();
  if (needs_undo(node.id_)) log_.emplace_back(undo::EntriesChanged{node.id_, node.cold_->entries});
  return node.cold_->entries;
}

// ---- Dead code -----------------------------------------------------------------------------

std::size_t GraphImpl::eliminate_dead_code() {
  // One backward pass: erasing a node can only make earlier nodes dead, and those are
  // visited later. Iteration survives erasing the current node (its links are kept).
  std::size_t removed = 0;
  NodeId id = tail;
  while (id.is_valid()) {
    Node& node = slot(id);
    id = node.prev_;
    if (!node.is_impure() && num_users(node) == 0) {
      erase_node(node, std::source_location::current());
      ++removed;
    }
  }
  return removed;
}

}  // namespace symtrace::detail
