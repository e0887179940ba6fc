#pragma once
/// \file
/// `Node`: one operation of a `Graph`, as in torch.fx: an opcode, a unique readable name, a
/// target, positional and keyword arguments, its users, and metadata (tensor dtype and shape,
/// the source location and module scope it was recorded at, and free-form entries for passes).
///
/// The graph owns all the nodes inside it. A `Node&` or `Node*` stays valid until the node is
/// erased, its creation is rolled back, or the graph is destroyed; `NodeId` names a node inside
/// arguments. Every mutation goes through the node or its graph, which keep users in step with
/// arguments and record what a checkpoint needs to undo it.

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/shape.hpp"
#include "symtrace/core/tensor_meta.hpp"
#include "symtrace/graph/argument.hpp"
#include "symtrace/graph/node_id.hpp"
#include "symtrace/graph/op_kind.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace {

class Graph;
namespace detail {
class GraphImpl;
struct NodeCold;
struct VertexSlot;
struct GraphTestAccess;
}  // namespace detail

/// Free-form metadata entries of a node, in insertion order (keys are unique).
using MetaEntries = std::vector<std::pair<std::string, Argument>>;

/// Well-known keys of `Node::meta`.
namespace meta_keys {
/// Set on a `call_module` node whose module could not be traced; the value is the reason.
inline constexpr std::string_view failure = "failure";
/// Set on a node whose value is not a tensor (size arithmetic: `int`, `bool`); the value is the
/// type's name, printed where a tensor node prints its dtype and shape (`%size : int [...]`).
inline constexpr std::string_view type = "type";
/// Set on the placeholder of a list or dict input: its structure, which the interpreter checks
/// an input against. A traced tensor is `['tensor', dtype, [sizes]]` (an unknown size None), a
/// constant part `'const'` (a guard checks its value), a list `['list', part...]`, a dict
/// `['dict', [key, part]...]`.
inline constexpr std::string_view structure = "structure";
}  // namespace meta_keys

/// A module scope interned in a graph (Graph::intern_scope, Graph::child_scope), valid in that
/// graph and its copies; `ScopeId{}` is the root's, "".
enum class ScopeId : std::uint32_t {
};

/// One operation in a graph. Not copyable; created and destroyed by its `Graph`.
class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  /// The id of the node in its graph (creation order, never reused).
  [[nodiscard]] NodeId id() const noexcept { return id_; }
  [[nodiscard]] OpKind op() const noexcept { return op_; }
  /// The unique name (`add_3`, `layer1_0_conv1`); allocates, see `fmt::format("{}", node)`.
  [[nodiscard]] std::string name() const;
  /// The target: the op name for `call_function`/`call_method`, the qualified module path
  /// for `call_module`, the attribute path for `get_attr`, the input name for `placeholder`,
  /// "output" for `output`.
  [[nodiscard]] std::string_view target() const noexcept { return {target_, target_size_}; }
  [[nodiscard]] const Arguments& args() const noexcept { return args_; }
  [[nodiscard]] const KeywordArguments& kwargs() const noexcept;
  /// The keyword argument `key`, or nullptr.
  [[nodiscard]] const Argument* kwarg(std::string_view key) const noexcept;
  /// The node that positional argument `index` names (fx's `node.args[i]` when it is a
  /// node), or nullptr when there is no such argument or it is something else.
  [[nodiscard]] Node* arg_node(std::size_t index) const noexcept;
  /// The node that keyword argument `key` names, or nullptr (absent, or not a node).
  [[nodiscard]] Node* kwarg_node(std::string_view key) const noexcept;

  /// The graph that owns this node.
  [[nodiscard]] Graph& graph() const noexcept;
  /// The previous and next node in graph order, or nullptr at either end. From an erased node
  /// they lead to the nearest live nodes it was between, as fx's iteration does.
  [[nodiscard]] Node* prev() const noexcept;
  [[nodiscard]] Node* next() const noexcept;
  /// The nodes that use this one as an argument, each once, in the order they started using
  /// it (as fx's `node.users`). O(number of uses).
  [[nodiscard]] std::vector<Node*> users() const;
  /// The number of distinct users; O(number of uses).
  [[nodiscard]] std::size_t num_users() const noexcept;
  /// The nodes this one uses, each once, in argument order (fx's `all_input_nodes`).
  [[nodiscard]] std::vector<Node*> input_nodes() const;

  /// Dtype and shape of the result, or nullptr when unknown (or the node has no tensor result).
  [[nodiscard]] const TensorMeta* tensor_meta() const noexcept { return tensor_meta_; }
  /// The user's source location this node was recorded at (empty when not recorded).
  [[nodiscard]] std::source_location where() const noexcept { return where_; }
  /// The qualified path of the module whose forward recorded this node ("" for the root).
  [[nodiscard]] std::string_view scope() const noexcept;
  /// The interned scope of this node in its graph.
  [[nodiscard]] ScopeId scope_id() const noexcept { return ScopeId{scope_}; }
  /// Free-form metadata for passes.
  [[nodiscard]] const MetaEntries& meta() const noexcept;
  /// The metadata entry `key`, or nullptr.
  [[nodiscard]] const Argument* meta(std::string_view key) const noexcept;
  /// True for nodes dead code elimination must keep: placeholders, the output, in-place
  /// methods and functions (a target ending in a single `_`, such as `add_` or `relu_`), and
  /// nodes marked with `set_impure()`.
  [[nodiscard]] bool is_impure() const noexcept;

  /// Replaces the positional arguments (users are updated).
  /// Given: every node referenced by `args` is alive in this graph (else std::invalid_argument
  /// and nothing changes). Execute: drops this node from the users of its old inputs, adds it
  /// to the users of the new ones. Result: `args() == args`.
  void set_args(Arguments args, std::source_location where = std::source_location::current());
  /// Replaces the keyword arguments (users are updated); keys must be unique.
  void set_kwargs(KeywordArguments kwargs, std::source_location where = std::source_location::current());
  /// Replaces every reference to `old_input` in the arguments by `new_input`.
  void replace_input_with(const Node& old_input, const Node& new_input,
                          std::source_location where = std::source_location::current());
  /// Sets (or, with nullopt, clears) the tensor dtype and shape of the result.
  void set_tensor_meta(const std::optional<TensorMeta>& meta);
  /// Sets the tensor dtype and shape of the result.
  void set_tensor_meta(const TensorMeta& meta);
  /// Sets the module scope path.
  void set_scope(std::string_view scope);
  /// Sets the module scope to `scope`, interned in this node's graph, in O(1). Throws
  /// std::invalid_argument for a scope the graph does not have.
  void set_scope(ScopeId scope, std::source_location where = std::source_location::current());
  /// Sets the source location.
  void set_where(std::source_location where);
  /// Adds or replaces the metadata entry `key`.
  void set_meta(std::string_view key, Argument value);
  /// Removes the metadata entry `key`; returns whether it existed.
  bool erase_meta(std::string_view key);
  /// Marks the node as having side effects (dead code elimination keeps it).
  void set_impure(bool impure = true);

 private:
  friend class Graph;
  friend class detail::GraphImpl;
  friend struct detail::VertexSlot;
  friend struct detail::GraphTestAccess;

  Node() noexcept;

  enum Flag : std::uint8_t {
    live = 1,
    impure = 2
  };

  detail::GraphImpl* graph_ = nullptr;
  const char* target_ = "";
  std::uint16_t target_size_ = 0;
  OpKind op_ = OpKind::placeholder;
  std::uint8_t flags_ = 0;
  NodeId id_;
  std::uint32_t name_base_ = 0;  // index of the name's base in the graph's name table
  std::uint32_t name_code_ = 0;  // 0: the bare base; n + 1: base + "_" + n
  NodeId prev_, next_;
  std::uint32_t scope_ = 0;  // index in the graph's scope table; 0 is ""
  Arguments args_;
  std::unique_ptr<detail::NodeCold> cold_;   // keyword arguments and metadata entries, rarely set
  const TensorMeta* tensor_meta_ = nullptr;  // interned by the graph
  std::source_location where_;
};

/// fx's one-line form of a node: `%add : [num_users=1] = call_function[target=add](args = (%x, 1), kwargs = {})`.
[[nodiscard]] std::string to_string(const Node& node);

}  // namespace symtrace

/// Prints the node's name (`add_3`).
template <>
struct fmt::formatter<symtrace::Node> : fmt::formatter<std::string_view> {
  auto format(const symtrace::Node& node, format_context& ctx) const -> format_context::iterator;
};
