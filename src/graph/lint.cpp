// Graph::lint(): checks every invariant of a graph and names the node and the broken rule.
// The checks, in order: the node order is a proper list of exactly the live nodes; names are
// unique and indexed; placeholders come first; there is exactly one output, the last node,
// with one argument; every argument is a live node defined before its user; users match
// arguments exactly (one edge per node reference, with its position, and the uses of one
// user adjacent: Note [Uses of one user are adjacent]).
#include "graph_impl.hpp"

#include "symtrace/graph/lint.hpp"

#include <fmt/format.h>

#include <unordered_set>

namespace symtrace::detail {
namespace {

template <class... A>
[[noreturn]] void fail(fmt::format_string<A...> format, A&&... args) {
  throw LintError("graph lint: " + fmt::vformat(format, fmt::make_format_args(args...)));
}

constexpr std::uint32_t unset = 0xffffffffU;

}  // namespace

void GraphImpl::lint() const {
  const std::size_t slots = num_slots();
  auto name_at = [&](NodeId id) { return id.value < slots ? name(slot(id)) : fmt::format("<id {}>", id.value); };

  // The order: from head to tail, symmetric links, live nodes only, no loop.
  std::vector<std::uint32_t> position(slots, unset);
  std::vector<NodeId> order;
  order.reserve(live_count);
  NodeId prev;
  for (NodeId id = head; id.is_valid();) {
    if (id.value >= slots) fail("the node order refers to node id {}, which does not exist", id.value);
    const Node& node = slot(id);
    if ((node.flags_ & Node::live) == 0) {
      fail("%{} was erased but is still in the node order: erasing must unlink it", name(node));
    }
    if (position[id.value] != unset) fail("the node order loops back to %{}: the order must be a list", name(node));
    if (node.prev_ != prev) {
      fail("%{}: its link to the previous node disagrees with the order (previous is {}, link says {})",
           name(node), prev.is_valid() ? fmt::format("%{}", name_at(prev)) : "none",
           node.prev_.is_valid() ? fmt::format("%{}", name_at(node.prev_)) : "none");
    }
    position[id.value] = static_cast<std::uint32_t>(order.size());
    order.push_back(id);
    prev = id;
    id = node.next_;
  }
  if (tail != prev) {
    fail("the graph's last node is recorded as {} but the order ends at {}",
         tail.is_valid() ? fmt::format("%{}", name_at(tail)) : "none",
         prev.is_valid() ? fmt::format("%{}", name_at(prev)) : "none");
  }
  for (std::size_t i = 0; i < slots; ++i) {
    const Node& node = slot(NodeId(static_cast<std::uint32_t>(i)));
    if ((node.flags_ & Node::live) != 0 && position[i] == unset) {
      fail("%{} is alive but not in the node order", name(node));
    }
    if ((node.flags_ & Node::live) == 0 && !uses(NodeId(static_cast<std::uint32_t>(i))).empty()) {
      fail("erased node %{} still has uses recorded: erasing must drop its users", name(node));
    }
  }
  if (order.size() != live_count) {
    fail("the order holds {} nodes but the graph counts {}", order.size(), live_count);
  }

  // Names: unique, and found under their own name.
  std::unordered_set<std::uint64_t> names;
  names.reserve(order.size());
  for (NodeId id : order) {
    const Node& node = slot(id);
    std::uint64_t key = (static_cast<std::uint64_t>(node.name_base_) << 32) | node.name_code_;
    if (!names.insert(key).second) {
      fail("two nodes are named '{}' (one is id {}): names must be unique", name(node), id.value);
    }
    if (names_.holder(node.name_base_, node.name_code_) != id) {
      fail("%{} (id {}) is not found under its own name: the name index is out of step", name(node), id.value);
    }
  }

  // Placeholders first; one output, last, with one argument.
  std::vector<NodeId> outputs;
  const Node* first_other = nullptr;
  for (NodeId id : order) {
    const Node& node = slot(id);
    if (node.op_ == OpKind::placeholder) {
      if (first_other != nullptr) {
        fail("placeholder %{} comes after %{} ({}): placeholders must precede every other node (create the "
             "inputs first)",
             name(node), name(*first_other), first_other->op_);
      }
    } else if (first_other == nullptr) {
      first_other = &node;
    }
    if (node.op_ == OpKind::output) outputs.push_back(id);
  }
  if (outputs.empty()) fail("the graph has no output node: a graph ends with exactly one (call Graph::output)");
  if (outputs.size() > 1) {
    fail("the graph has {} output nodes (%{} and %{}): a graph has exactly one", outputs.size(), name_at(outputs[0]),
         name_at(outputs[1]));
  }
  if (outputs.front() != output) fail("output %{} is not the graph's recorded output node", name_at(outputs.front()));
  if (order.back() != output) {
    fail("%{} comes after the output node %{}: the output must be the last node (insert before it)",
         name_at(slot(output).next_), name_at(output));
  }
  if (slot(output).args_.size() != 1 || !slot(output).kwargs().empty()) {
    fail("output %{} has {} arguments: the output takes exactly one (a list for several results)", name_at(output),
         slot(output).args_.size() + slot(output).kwargs().size());
  }

  // Arguments: live nodes of this graph, defined before their user.
  std::vector<std::vector<NodeId>> refs(slots);
  for (NodeId id : order) {
    const Node& node = slot(id);
    refs[id.value] = node_refs(node.args_, node.kwargs());
    std::uint32_t pos = 0;
    for (NodeId input : refs[id.value]) {
      if (input.value >= slots || (slot(input).flags_ & Node::live) == 0) {
        fail("%{} uses {} at argument position {}, which is not a live node of this graph: arguments may only "
             "reference nodes of their own graph",
             name(node), input.value < slots ? "erased node %" + name_at(input) : fmt::format("node id {}", input.value),
             pos);
      }
      if (position[input.value] >= position[id.value]) {
        fail("%{} uses %{}, which is defined after it: nodes must be in topological order (move %{} after its "
             "inputs)",
             name(node), name_at(input), name(node));
      }
      ++pos;
    }
  }

  // Users match arguments exactly.
  std::vector<std::vector<bool>> seen(slots);
  for (NodeId id : order) seen[id.value].assign(refs[id.value].size(), false);
  for (NodeId id : order) {
    std::unordered_set<std::size_t> finished;  // users whose run of uses has ended
    std::size_t run = static_cast<std::size_t>(-1);
    for (const StoredUse& use : uses(id)) {
      std::size_t user = use.user;
      std::uint32_t pos = use.position;
      if (user >= slots || (slot(NodeId(static_cast<std::uint32_t>(user))).flags_ & Node::live) == 0) {
        fail("%{} lists {} as a user: users must be live nodes of this graph", name_at(id),
             user < slots ? "erased node %" + name_at(NodeId(static_cast<std::uint32_t>(user))) : fmt::format("node id {}", user));
      }
      std::string user_name = name(slot(NodeId(static_cast<std::uint32_t>(user))));
      if (pos >= refs[user].size() || refs[user][pos] != id) {
        fail("%{} lists %{} as a user at argument position {}, but %{} does not use %{} there: users must match "
             "arguments exactly",
             name_at(id), user_name, pos, user_name, name_at(id));
      }
      if (seen[user][pos]) {
        fail("%{} lists the use by %{} at argument position {} twice: users must match arguments exactly",
             name_at(id), user_name, pos);
      }
      seen[user][pos] = true;
      if (user != run) {
        if (run != static_cast<std::size_t>(-1)) finished.insert(run);
        if (finished.contains(user)) {
          fail("the uses of %{} by %{} are not adjacent in its users: they must be added and removed together",
               name_at(id), user_name);
        }
        run = user;
      }
    }
  }
  for (NodeId id : order) {
    for (std::size_t pos = 0; pos < refs[id.value].size(); ++pos) {
      if (!seen[id.value][pos]) {
        fail("%{} uses %{} at argument position {}, but %{} does not list %{} among its users: users must match "
             "arguments exactly",
             name_at(id), name_at(refs[id.value][pos]), pos, name_at(refs[id.value][pos]), name_at(id));
      }
    }
  }
  // Subgraphs (cond branches) are graphs of their own, held to the same rules.
  for (const auto& [sub_name, sub] : subgraphs) {
    try {
      sub->lint();
    } catch (const LintError& e) {
      fail("in subgraph '{}': {}", sub_name, std::string_view(e.what()).substr(std::string_view("graph lint: ").size()));
    }
  }
}

}  // namespace symtrace::detail
