#pragma once
// GraphImpl: the state behind `Graph` and the single place that mutates it. Every mutation
// keeps three things in step: the node order (prev/next ids), the Boost.Graph edges (one per
// node reference in a user's arguments, from the input to the user, in argument order), and,
// while a checkpoint is open, the undo log that rolls the mutation back.
//
// Note [Uses of one user are adjacent]: a node's edges to one user are added in one batch
// (when that user's arguments are set) and removed in one batch, so in the input's out-edge
// list they are adjacent. `Node::users()` and `num_users()` rely on it to drop duplicates
// without a set; lint() checks it.

#include "symtrace/graph/bgl.hpp"
#include "symtrace/graph/graph.hpp"
#include "name_table.hpp"
#include "text_arena.hpp"
#include "text_index.hpp"

#include <boost/pool/pool.hpp>
#include <boost/variant2/variant.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace symtrace::detail {

/// What a node rarely has: keyword arguments and free-form metadata.
struct NodeCold {
  KeywordArguments kwargs;
  MetaEntries entries;
};

/// Makes `pool` the allocator of `Use` bundles on this thread while alive (nestable).
class UsePoolScope {
 public:
  explicit UsePoolScope(boost::pool<>& pool) noexcept;
  ~UsePoolScope();
  UsePoolScope(const UsePoolScope&) = delete;
  UsePoolScope& operator=(const UsePoolScope&) = delete;

 private:
  boost::pool<>* previous_;
};

/// Interned tensor metadata: nodes point at one shared copy per distinct (dtype, shape).
class MetaTable {
 public:
  const TensorMeta* intern(const TensorMeta& meta);

 private:
  struct Hash {
    std::size_t operator()(const TensorMeta& m) const noexcept;
  };
  std::unordered_set<TensorMeta, Hash> metas_;
  const TensorMeta* last_ = nullptr;  // consecutive nodes usually share a meta: skip the hash
};

/// Interned module scope paths; index 0 is "".
class ScopeTable {
 public:
  ScopeTable() = default;
  ScopeTable(const ScopeTable& other);
  ScopeTable& operator=(const ScopeTable&) = delete;
  std::uint32_t intern(std::string_view scope);
  [[nodiscard]] std::string_view text(std::uint32_t index) const noexcept {
    return index == 0 ? std::string_view() : texts_[index - 1];
  }

 private:
  // Scope 0 is the root's (""), stored nowhere: an empty graph allocates nothing here.
  TextArena arena_;  // never rolled back: scopes stay interned
  std::vector<std::string_view> texts_;  // scope i + 1
  TextIndex index_;  // texts -> their position in texts_
  // Consecutive nodes usually share a scope (a module's ops): skip the hash for a repeat.
  std::string_view last_text_;
  std::uint32_t last_index_ = 0;
};

// Undo records, one per primitive change made while a checkpoint is open.
namespace undo {
struct Created {
  NodeId id;
  NameTable::Taken name;
};
struct Erased {
  NodeId id;
  NodeId prev;
};
struct ArgsChanged {
  NodeId id;
  Arguments args;
  KeywordArguments kwargs;
};
struct RunChanged {  // the uses of `input` by `user` were replaced: `added` uses at `offset`
  NodeId input;
  NodeId user;
  std::uint32_t offset;
  std::uint32_t added;
  std::vector<std::uint32_t> old_positions;  // the run that was there before
};
struct Moved {
  NodeId id;
  NodeId prev;
};
struct MetaChanged {
  NodeId id;
  const TensorMeta* tensor_meta;
  std::uint32_t scope;
  std::source_location where;
  std::uint8_t flags;
};
struct EntriesChanged {
  NodeId id;
  MetaEntries entries;
};
using Record = boost::variant2::variant<Created, Erased, ArgsChanged, RunChanged, Moved, MetaChanged, EntriesChanged>;
}  // namespace undo

class GraphImpl {
 public:
  enum PointMode : std::uint8_t { at_end, before, after };

  explicit GraphImpl(Graph* owner);
  GraphImpl(const GraphImpl& other, Graph* owner);
  GraphImpl(const GraphImpl&) = delete;
  GraphImpl& operator=(const GraphImpl&) = delete;
  ~GraphImpl();

  static GraphImpl& of(const Graph& graph) { return graph.impl(); }

  // Lookup.
  [[nodiscard]] Node& slot(NodeId id) noexcept { return storage_.m_vertices[id.value].m_property.node; }
  [[nodiscard]] const Node& slot(NodeId id) const noexcept { return storage_.m_vertices[id.value].m_property.node; }
  [[nodiscard]] std::size_t num_slots() const noexcept { return storage_.m_vertices.size(); }
  [[nodiscard]] Node* live_node(NodeId id) noexcept;
  [[nodiscard]] const Node* live_node(NodeId id) const noexcept;
  [[nodiscard]] Node* find_node(std::string_view name) noexcept;
  [[nodiscard]] bool owns(const Node& node) const noexcept { return node.graph_ == this; }

  // Mutations (the public API forwards here after nothing else).
  Node& create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                    std::string_view name, std::source_location where);
  void set_inputs(Node& node, Arguments args, KeywordArguments kwargs, std::source_location where);
  void erase_node(Node& node, std::source_location where);
  std::size_t replace_all_uses_with(Node& old_node, Node& replacement, std::source_location where);
  void move_node(Node& node, Node& anchor, bool after, std::source_location where);
  /// Changes the given fields: the tensor metadata when `set_tensor_meta` (to `*tensor_meta`, or
  /// none when null), the others when their pointer is not null.
  void set_meta(Node& node, bool set_tensor_meta, const TensorMeta* tensor_meta, const std::string_view* scope,
                const std::source_location* where, const std::uint8_t* flags);
  MetaEntries& entries_for_update(Node& node);
  std::size_t eliminate_dead_code();

  // Insertion point.
  [[nodiscard]] std::pair<std::uint8_t, NodeId> insert_point() const noexcept { return {point_mode_, point_anchor_}; }
  void set_insert_point(std::uint8_t mode, NodeId anchor) noexcept {
    point_mode_ = mode;
    point_anchor_ = anchor;
  }

  // Checkpoints.
  std::uint64_t open_checkpoint();
  void commit(std::uint64_t serial) noexcept;
  void rollback(std::uint64_t serial) noexcept;
  [[nodiscard]] bool is_open(std::uint64_t serial) const noexcept;
  /// True when `serial` is open and no checkpoint taken after it is.
  [[nodiscard]] bool is_innermost(std::uint64_t serial) const noexcept {
    return !checkpoints_.empty() && checkpoints_.back().serial == serial;
  }

  // Users (Note [Uses of one user are adjacent]).
  [[nodiscard]] std::vector<Node*> users(const Node& node);
  [[nodiscard]] std::size_t num_users(const Node& node) const noexcept;

  void lint() const;

  // Names and texts.
  void append_name(std::string& out, const Node& node) const { names_.append_name(out, node.name_base_, node.name_code_); }
  [[nodiscard]] std::string name(const Node& node) const {
    std::string out;
    append_name(out, node);
    return out;
  }
  [[nodiscard]] std::string_view scope_text(std::uint32_t scope) const noexcept { return scopes_.text(scope); }

  Graph* owner = nullptr;
  NodeId head, tail, output;
  std::size_t live_count = 0;
  std::vector<Tensor> constants;  // Graph::add_constant; append-only, truncated by rollback
  std::vector<Graph::Guard> guards;  // Graph::add_guard
  // Graph::add_subgraph; append-only (shared by copies: subgraphs are immutable), truncated by rollback
  std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> subgraphs;
  const GraphStorage& storage() const noexcept { return storage_; }

 private:
  friend struct symtrace::detail::GraphTestAccess;

  [[nodiscard]] bool logging() const noexcept { return !checkpoints_.empty(); }
  /// Makes room for `n` more undo records (so recording them cannot throw), growing the log
  /// geometrically: an exact reserve per change would copy the whole log each time.
  void reserve_log(std::size_t n) {
    if (log_.capacity() - log_.size() < n) log_.reserve(std::max(log_.size() + n, 2 * log_.capacity()));
  }
  void copy_nodes(const GraphImpl& other);
  void check_inputs(const Arguments& args, const KeywordArguments& kwargs, OpKind op, std::string_view target,
                    std::source_location where) const;
  void add_edges(const Node& node);
  void remove_edges(const Node& node);
  /// Replaces the run of uses of `input` by `user` (Note [Uses of one user are adjacent]) by
  /// uses at `positions`, in place (or at the end when there was none); logs it when asked.
  void rewrite_run(NodeId input, NodeId user, const std::vector<std::uint32_t>& positions, bool log);
  void undo_run(undo::RunChanged& record) noexcept;
  /// True when a checkpoint is open and `id` existed when the innermost one was taken (nodes
  /// made since need no undo records beyond their creation: rolling back removes them).
  [[nodiscard]] bool needs_undo(NodeId id) const noexcept {
    return !checkpoints_.empty() && id.value < checkpoints_.back().num_slots;
  }
  void link_after(Node& node, NodeId prev) noexcept;
  void unlink(Node& node) noexcept;
  void undo(undo::Record& record) noexcept;
  [[nodiscard]] std::vector<NodeId> distinct_inputs(const Node& node) const;

  struct CheckpointRecord {
    std::uint64_t serial;
    std::size_t log_size;
    std::size_t num_slots;
    std::size_t num_constants;
    std::size_t num_subgraphs;
    TextArena::Mark arena;
    std::uint8_t point_mode;
    NodeId point_anchor;
  };

  // Order matters: the pool outlives the storage whose edge bundles it holds.
  boost::pool<> use_pool_{sizeof(Use)};
  GraphStorage storage_;
  TextArena arena_;
  NameTable names_;
  ScopeTable scopes_;
  MetaTable metas_;
  std::uint8_t point_mode_ = at_end;
  NodeId point_anchor_;
  std::vector<undo::Record> log_;
  std::vector<CheckpointRecord> checkpoints_;
  std::uint64_t next_serial_ = 1;
};

/// Node references of `args` then `kwargs`, in order.
[[nodiscard]] std::vector<NodeId> node_refs(const Arguments& args, const KeywordArguments& kwargs);

}  // namespace symtrace::detail
