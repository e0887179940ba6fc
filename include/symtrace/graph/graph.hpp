#pragma once
/// \file
/// `Graph`: the IR every tracer writes and every consumer reads (torch.fx's Graph, in C++).
/// Nodes live in slots indexed by node id (stable addresses; each slot lists the node's uses,
/// an edge from the input to its user with the use's argument position) and in an explicit
/// order that passes edit with insertion points. Names are unique and made so in O(1) per node. A checkpoint can later roll
/// the graph back to exactly the state it was taken in.
///
/// This header does not include Boost.Graph; `symtrace/graph/bgl.hpp` makes a graph a Boost
/// graph (a read-only view) for running Boost's algorithms on it.
///
///     Graph g;
///     Node& x = g.placeholder("x");
///     Node& y = g.call_function("relu", {x});
///     g.output(y);
///     g.lint();
///     fmt::print("{}", to_string(g));
///
/// A graph is not thread-safe: one thread mutates it at a time (const access from several
/// threads is safe while nobody mutates it).

#include "symtrace/core/tensor.hpp"
#include "symtrace/graph/argument.hpp"
#include "symtrace/graph/node.hpp"
#include "symtrace/graph/op_kind.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

namespace detail {
class GraphImpl;
}  // namespace detail

/// The nodes of a graph in order, forwards or backwards. The iterator holds the current node
/// and reads its successor when advanced, so erasing the current node while iterating is
/// safe (as in fx), and nodes inserted after the current one are visited.
class NodeRange {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Node;
    using difference_type = std::ptrdiff_t;
    using pointer = Node*;
    using reference = Node&;

    iterator() noexcept = default;
    [[nodiscard]] Node& operator*() const noexcept { return *node_; }
    [[nodiscard]] Node* operator->() const noexcept { return node_; }
    iterator& operator++() noexcept {
      node_ = reverse_ ? node_->prev() : node_->next();
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.node_ == b.node_; }

   private:
    friend class NodeRange;
    iterator(Node* node, bool reverse) noexcept : node_(node), reverse_(reverse) {}
    Node* node_ = nullptr;
    bool reverse_ = false;
  };

  [[nodiscard]] iterator begin() const noexcept { return iterator(first_, reverse_); }
  [[nodiscard]] iterator end() const noexcept { return iterator(nullptr, reverse_); }
  [[nodiscard]] bool empty() const noexcept { return first_ == nullptr; }
  /// The same nodes in the opposite direction.
  [[nodiscard]] NodeRange reversed() const noexcept { return NodeRange(last_, first_, !reverse_); }

 private:
  friend class Graph;
  NodeRange(Node* first, Node* last, bool reverse) noexcept : first_(first), last_(last), reverse_(reverse) {}
  Node* first_;
  Node* last_;
  bool reverse_;
};

/// A graph of nodes in an explicit topological order. Owns its nodes.
class Graph {
 public:
  class Checkpoint;
  class InsertPoint;

  Graph();
  ~Graph();
  /// A deep copy with the same node ids, names, order and metadata (no checkpoints).
  Graph(const Graph& other);
  Graph& operator=(const Graph& other);
  /// Moving keeps every `Node&` valid (the nodes stay where they are); the moved-from graph
  /// is empty.
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;

  /// Creates a node at the insertion point (by default the end of the graph, before the
  /// output node if there is one) and returns it.
  /// Given: `args`/`kwargs` reference only live nodes of this graph; keyword names are unique;
  /// an `output` node has one argument and the graph has no output yet.
  /// Execute: names the node `name` (or, when empty, after its target, as fx does:
  /// `layer1.0.conv1` gives `layer1_0_conv1`); a taken name gets the next free `_N` suffix.
  /// Result: the node is in the graph and in the users of each input.
  /// Throws std::invalid_argument naming `where` and nothing changes when a precondition fails.
  Node& create_node(OpKind op, std::string_view target, Arguments args = {}, KeywordArguments kwargs = {},
                    std::string_view name = {},
                    std::source_location where = std::source_location::current());
  /// A graph input called `name` (fx's `placeholder`).
  Node& placeholder(std::string_view name, std::source_location where = std::source_location::current());
  /// Reads the parameter or buffer `qualified_name` (`layer1.0.conv1.weight`).
  Node& get_attr(std::string_view qualified_name,
                 std::source_location where = std::source_location::current());
  Node& call_function(std::string_view target, Arguments args, KeywordArguments kwargs = {},
                      std::source_location where = std::source_location::current());
  Node& call_method(std::string_view target, Arguments args, KeywordArguments kwargs = {},
                    std::source_location where = std::source_location::current());
  Node& call_module(std::string_view module_path, Arguments args, KeywordArguments kwargs = {},
                    std::source_location where = std::source_location::current());
  /// The output node, returning `result` (a node, or a list of nodes for several results).
  Node& output(Argument result, std::source_location where = std::source_location::current());

  /// Until the returned guard is destroyed, new nodes go right before `anchor`.
  [[nodiscard]] InsertPoint inserting_before(Node& anchor, std::source_location where = std::source_location::current());
  /// Until the returned guard is destroyed, new nodes go right after `anchor`, each after the
  /// previous one (so they keep their creation order).
  [[nodiscard]] InsertPoint inserting_after(Node& anchor, std::source_location where = std::source_location::current());
  /// Moves `node` right before `anchor` (fx's `anchor.prepend(node)`); lint() checks the
  /// resulting order.
  void move_before(Node& node, Node& anchor, std::source_location where = std::source_location::current());
  /// Moves `node` right after `anchor` (fx's `anchor.append(node)`).
  void move_after(Node& node, Node& anchor, std::source_location where = std::source_location::current());

  /// Interns the module scope `scope` ("layer1.0") for Node::set_scope(ScopeId): O(|scope|).
  [[nodiscard]] ScopeId intern_scope(std::string_view scope);
  /// Interns the scope `name` inside the scope `parent` ("layer1.0" and "conv1":
  /// "layer1.0.conv1"; `ScopeId{}` and "fc": "fc") in O(|name|) amortized, whatever the depth
  /// of `parent`, where intern_scope reads the whole path (Note [Scopes as prefixes] in
  /// src/graph/graph_impl.cpp): a tracer gives each module it enters its scope this way.
  /// Throws std::invalid_argument for a `parent` the graph does not have.
  [[nodiscard]] ScopeId child_scope(ScopeId parent, std::string_view name,
                                    std::source_location where = std::source_location::current());

  /// Stores `value` as a constant of the graph and returns its name (`_tensor_constant0`,
  /// `_tensor_constant1`, ...), which a `get_attr` node reads, as fx keeps a tensor a trace
  /// met as an attribute of its GraphModule. The graph holds the handle: a view of a
  /// parameter keeps seeing writes into that parameter. Copies of the graph share the
  /// constants; rollback removes those added since the checkpoint.
  std::string add_constant(Tensor value);
  /// The constant called `name`, or nullptr.
  [[nodiscard]] const Tensor* find_constant(std::string_view name) const noexcept;
  /// The number of constants.
  [[nodiscard]] std::size_t num_constants() const noexcept;
  /// One past the largest node id the graph has used: nodes made from now on get ids at least
  /// this (rollback lowers it back, so ids of rolled-back nodes are given out again).
  [[nodiscard]] std::uint32_t id_bound() const noexcept;

  /// Stores `subgraph` (a branch of `cond`, traced separately) and returns its name,
  /// `base` with a counter (`true_graph_0`), which a `get_attr` node reads. Subgraphs are
  /// immutable once added; copies of the graph share them; rollback removes those added since
  /// the checkpoint.
  std::string add_subgraph(std::string_view base, Graph subgraph);
  /// The subgraph called `name`, or nullptr.
  [[nodiscard]] const Graph* find_subgraph(std::string_view name) const noexcept;
  /// The subgraphs with their names, in the order they were added.
  [[nodiscard]] const std::vector<std::pair<std::string, std::shared_ptr<const Graph>>>& subgraphs() const noexcept;

  /// A value an input was specialised on when the graph was traced (fx's concrete_args):
  /// running the graph with another value for that input is refused.
  struct Guard {
    std::string input;  ///< the placeholder's name
    Argument value;     ///< the value the trace assumed
    friend bool operator==(const Guard&, const Guard&) = default;
  };
  /// Records that input `input` was specialised on `value`.
  void add_guard(std::string input, Argument value);
  /// The guards, in the order they were added.
  [[nodiscard]] const std::vector<Guard>& guards() const noexcept;

  /// A fact about the named dims of the inputs that the trace assumed because an op needed it
  /// and the dims' ranges could not decide it (docs/design.md, decision 13): `N == M` where two named
  /// dims broadcast together, `H % 32 == 0` for a reshape. The interpreter refuses inputs
  /// whose sizes break it, naming it and `where`.
  struct SizeGuard {
    SymFact fact;
    std::source_location where;  ///< the user's file:line of the op that needed it
  };
  /// Records `fact` (normalized: `H % 2 == 0` rather than `H == 2*(H//2)`) as a size guard,
  /// unless the graph has it already (then the first one stays). O(1). Rollback removes size
  /// guards added since the checkpoint.
  void add_size_guard(const SymFact& fact, std::source_location where);
  /// The size guards, in the order they were added.
  [[nodiscard]] const std::vector<SizeGuard>& size_guards() const noexcept;

  /// The nodes in order.
  [[nodiscard]] NodeRange nodes() const noexcept;
  /// The number of nodes.
  [[nodiscard]] std::size_t size() const noexcept;
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  /// The node called `name`, or nullptr. O(1). Suffixes are read as numbers, as fx reads
  /// them: `add_01` finds `add_1`.
  [[nodiscard]] Node* find_node(std::string_view name) const noexcept;
  /// The live node with id `id`, or nullptr. O(1).
  [[nodiscard]] Node* find_node(NodeId id) const noexcept;
  /// The live node with id `id`; throws std::invalid_argument when there is none.
  [[nodiscard]] Node& node(NodeId id, std::source_location where = std::source_location::current()) const;
  /// The output node, or nullptr.
  [[nodiscard]] Node* output_node() const noexcept;

  /// Removes `node`.
  /// Given: the node belongs to this graph and has no users (else std::invalid_argument naming
  /// the node and its users, and nothing changes). Execute: drops it from its inputs' users and
  /// from the order. Result: references to it are invalid; its name stays taken (as in fx).
  void erase_node(Node& node, std::source_location where = std::source_location::current());
  /// Makes every user of `old_node` other than `replacement` itself use `replacement` instead
  /// (so inserting `r = f(old)` then replacing old by r works, as with fx's `delete_user_cb`);
  /// returns the users changed. A replacement defined after one of the users leaves them out of
  /// order, which lint() reports.
  std::size_t replace_all_uses_with(Node& old_node, Node& replacement, std::source_location where = std::source_location::current());
  /// Removes every node whose result is unused, except impure nodes (see `Node::is_impure`),
  /// in one backward pass; returns the number removed.
  std::size_t eliminate_dead_code();

  /// Checks every invariant: nodes are in topological order, every argument is a live node of
  /// this graph defined before its user, users match arguments exactly, names are unique,
  /// placeholders come first, and there is exactly one output, the last node. Throws
  /// `LintError` naming the node and the broken invariant.
  void lint() const;

  /// Takes a checkpoint; see `Graph::Checkpoint`.
  [[nodiscard]] Checkpoint checkpoint();

 private:
  friend class Node;
  friend class detail::GraphImpl;
  friend struct detail::GraphTestAccess;
  detail::GraphImpl& impl() const;
  // Owned alone (checkpoints and insertion points hold weak_ptrs, so they can tell when the
  // graph is gone); null only after a move, recreated empty on next use.
  mutable std::shared_ptr<detail::GraphImpl> impl_;
};

/// Rolls the graph back to exactly the state it had when the checkpoint was taken (nodes,
/// order, arguments, users, names and name counters, metadata), unless committed.
/// Rollback takes time proportional to what changed since. Checkpoints nest; they must end in
/// the reverse order they were taken (rolling back an outer checkpoint ends the inner ones).
/// Note [Rollback restores names]: names handed out after the checkpoint are free again, so a
/// retrace after rollback produces the same names a first trace would have.
/// The insertion point is part of the state: rolling back restores the one in force when the
/// checkpoint was taken (end insertion-point guards inside the checkpoint's scope).
///
///     auto checkpoint = graph.checkpoint();
///     trace_child(graph);                // may throw
///     checkpoint.commit();               // keep; without it the destructor rolls back
class Graph::Checkpoint {
 public:
  Checkpoint(Checkpoint&& other) noexcept = default;
  Checkpoint& operator=(Checkpoint&&) = delete;
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;
  /// Rolls back unless `commit()` or `rollback()` was called.
  ~Checkpoint();

  /// Keeps the changes (an enclosing checkpoint can still roll them back). Throws
  /// std::logic_error while a checkpoint taken after this one is still open.
  void commit();
  /// Undoes every change made since the checkpoint was taken.
  void rollback();
  /// True until commit() or rollback(), or an enclosing rollback, ends it.
  [[nodiscard]] bool active() const noexcept;

 private:
  friend class Graph;
  Checkpoint(std::weak_ptr<detail::GraphImpl> graph, std::uint64_t serial) noexcept
      : graph_(std::move(graph)), serial_(serial) {}
  std::weak_ptr<detail::GraphImpl> graph_;  // a checkpoint that outlives its graph does nothing
  std::uint64_t serial_;
};

/// Restores the previous insertion point when destroyed (fx's `with graph.inserting_before(n)`).
class Graph::InsertPoint {
 public:
  InsertPoint(InsertPoint&& other) noexcept = default;
  InsertPoint& operator=(InsertPoint&&) = delete;
  InsertPoint(const InsertPoint&) = delete;
  InsertPoint& operator=(const InsertPoint&) = delete;
  ~InsertPoint();

 private:
  friend class Graph;
  InsertPoint(std::weak_ptr<detail::GraphImpl> graph, std::uint8_t mode, NodeId anchor) noexcept
      : graph_(std::move(graph)), mode_(mode), anchor_(anchor) {}
  std::weak_ptr<detail::GraphImpl> graph_;
  std::uint8_t mode_;  // the point to restore
  NodeId anchor_;
};

}  // namespace symtrace
