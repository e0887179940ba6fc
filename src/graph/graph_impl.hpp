#pragma once
// GraphImpl: the state behind `Graph` and the single place that mutates it. Every mutation
// keeps three things in step: the node order (prev/next ids), the uses (one per node reference
// in a user's arguments, in the input's slot: the user and the reference's position), and,
// while a checkpoint is open, the undo log that rolls the mutation back.
//
// Note [Uses of one user are adjacent]: a node's uses by one user are added in one batch (when
// that user's arguments are set) and removed in one batch, so in the input's list of uses
// they are adjacent. `Node::users()` and `num_users()` rely on it to drop duplicates without a
// set; lint() checks it.

#include "symtrace/graph/bgl.hpp"
#include "symtrace/graph/graph.hpp"
#include "chunked_vector.hpp"
#include "name_table.hpp"
#include "text_arena.hpp"
#include "text_index.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/variant2/variant.hpp>

#include <cstdint>
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

/// The uses of a node, in the order they were added (Note [Uses of one user are adjacent]).
/// Most nodes have one or two users: those are held inline.
using UseList = boost::container::small_vector<StoredUse, 2>;

/// A node slot: the node and its uses. Slots live in a ChunkedVector: random access by node
/// id, and addresses that never move, so `Node&` stays valid as the graph grows. A slot is
/// never removed from the middle: an erased node stays as a dead slot without uses (ids are
/// never reused), and rolling back pops slots from the end, in O(1). The `bgl::View` of
/// bgl.hpp reads the uses as Boost.Graph's out-edges.
struct VertexSlot {
  VertexSlot() noexcept = default;
  Node node;
  UseList uses;
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

/// Interned module scope paths; index 0 is "". Note [Scopes as prefixes] in graph_impl.cpp.
class ScopeTable {
 public:
  ScopeTable() = default;
  ScopeTable(const ScopeTable& other);
  ScopeTable& operator=(const ScopeTable&) = delete;
  /// The scope whose text is `scope`. O(|scope|).
  std::uint32_t intern(std::string_view scope);
  /// The scope `name` inside the scope `parent` ("layer1" and "0": "layer1.0"; the root's and
  /// "fc": "fc"). O(|name|), amortized, whatever the parent's depth. Precondition: parent <
  /// size().
  std::uint32_t child(std::uint32_t parent, std::string_view name);
  /// The number of scopes, the root's included (valid indexes are below it).
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size() + 1; }
  [[nodiscard]] std::string_view text(std::uint32_t index) const noexcept {
    if (index == 0) return {};
    const Entry& e = entries_[index - 1];
    return {blocks_[e.block].data.get() + e.offset, e.size};
  }

 private:
  static constexpr std::uint32_t unknown_parent = 0xffffffffU;
  /// A scope: its text in the blocks, its parent when it was made by child(), and its hash
  /// (combined from its components, so that a child's follows from its parent's).
  struct Entry {
    std::uint32_t block;
    std::uint32_t offset;
    std::uint32_t size;
    std::uint32_t parent;
    std::uint32_t hash;
  };
  struct Block {
    std::unique_ptr<char[]> data;
    std::size_t capacity;
  };
  [[nodiscard]] static std::uint32_t root_hash() noexcept { return 0x2545f491U; }
  [[nodiscard]] static std::uint32_t combine(std::uint32_t parent, std::string_view name) noexcept;
  [[nodiscard]] std::uint32_t hash(std::uint32_t index) const noexcept {
    return index == 0 ? root_hash() : entries_[index - 1].hash;
  }
  /// Stores `prefix`, then '.' and `name` (only `name` for an empty prefix), in place after
  /// the scope `prefix_scope` when its text is the last thing stored (as a chain of modules
  /// makes them); else as a copy.
  Entry place(std::uint32_t prefix_scope, std::string_view prefix, std::string_view name);
  std::uint32_t add(Entry entry, std::size_t slot);

  // Texts are never moved: a block is filled, then another one started (at least twice the
  // size of the text that did not fit, so that a long chain of scopes is copied O(log) times).
  std::vector<Block> blocks_;
  std::size_t used_ = 0;        // in the last block
  std::vector<Entry> entries_;  // scope i + 1
  TextIndex index_;             // scopes by hash
  // Consecutive nodes usually share a scope (a module's ops): skip the hash for a repeat.
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
  // The run that was there before.
  std::vector<StoredUse> old_uses;
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

/// A size guard's identity: its fact's expression ids and relation.
struct SizeGuardKey {
  std::uint32_t lhs, rhs;
  SymRel rel;
  friend bool operator==(const SizeGuardKey&, const SizeGuardKey&) = default;
  struct Hash {
    std::size_t operator()(const SizeGuardKey& k) const noexcept {
      return std::hash<std::uint64_t>{}((std::uint64_t{k.lhs} << 32 | k.rhs) ^ (std::uint64_t{static_cast<std::uint8_t>(k.rel)} << 61));
    }
  };
};
inline SizeGuardKey size_guard_key(const SymFact& f) noexcept { return {f.lhs.id(), f.rhs.id(), f.rel}; }

class GraphImpl {
 public:
  enum PointMode : std::uint8_t {
    at_end,
    before,
    after
  };

  explicit GraphImpl(Graph* owner);
  GraphImpl(const GraphImpl& other, Graph* owner);
  GraphImpl(const GraphImpl&) = delete;
  GraphImpl& operator=(const GraphImpl&) = delete;
  ~GraphImpl();

  static GraphImpl& of(const Graph& graph) { return graph.impl(); }

  // Lookup.
  [[nodiscard]] Node& slot(NodeId id) noexcept { return slots_[id.value].node; }
  [[nodiscard]] const Node& slot(NodeId id) const noexcept { return slots_[id.value].node; }
  [[nodiscard]] std::size_t num_slots() const noexcept { return slots_.size(); }
  /// The uses of node `id`, in order. Precondition: id < num_slots().
  [[nodiscard]] const UseList& uses(NodeId id) const noexcept { return slots_[id.value].uses; }
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
  /// Sets the node's scope to the interned scope `scope`; std::invalid_argument when there is none.
  void set_scope(Node& node, std::uint32_t scope, std::source_location where);
  std::uint32_t intern_scope(std::string_view scope) { return scopes_.intern(scope); }
  std::uint32_t child_scope(std::uint32_t parent, std::string_view name, std::source_location where);
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
  std::vector<Tensor> constants;                                         // Graph::add_constant; append-only, truncated by rollback
  std::vector<Graph::Guard> guards;                                      // Graph::add_guard
  std::vector<Graph::SizeGuard> size_guards;                             // Graph::add_size_guard; truncated by rollback
  std::unordered_set<SizeGuardKey, SizeGuardKey::Hash> size_guard_keys;  // of size_guards, for O(1) dedup
  // Graph::add_subgraph; append-only (shared by copies: subgraphs are immutable), truncated by rollback
  std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> subgraphs;

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
  /// Adds the uses of `node`'s inputs by `node`, in argument order.
  void add_uses(const Node& node);
  /// Removes the uses of `node`'s inputs by `node`; allocates nothing.
  void remove_uses(const Node& node) noexcept;
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
    std::size_t num_size_guards;
    TextArena::Mark arena;
    std::uint8_t point_mode;
    NodeId point_anchor;
  };

  ChunkedVector<VertexSlot> slots_;
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
