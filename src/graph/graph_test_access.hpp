#pragma once
// GraphTestAccess: lets tests break a graph's invariants on purpose, to check that lint()
// catches each one. Not installed; only the graph tests include it.

#include "graph_impl.hpp"

#include <algorithm>

namespace symtrace::detail {

struct GraphTestAccess {
  static GraphImpl& impl(Graph& g) { return g.impl(); }
  /// Drops the uses of `input` by `user` from the users, leaving the arguments alone.
  static void remove_uses(Graph& g, const Node& input, const Node& user) {
    UseList& uses = impl(g).slots_[input.id().value].uses;
    uses.erase(std::remove_if(uses.begin(), uses.end(), [&](const StoredUse& use) { return use.user == user.id().value; }),
               uses.end());
  }
  /// Adds a use of `input` by `user` at `position` to the users only.
  static void add_use(Graph& g, const Node& input, const Node& user, std::uint32_t position) {
    impl(g).slots_[input.id().value].uses.push_back(StoredUse{user.id().value, position});
  }
  /// Replaces the arguments without updating users.
  static void set_args_raw(Node& node, Arguments args) { node.args_ = std::move(args); }
  /// Gives `node` the name of `other` (without telling the name index).
  static void copy_name(Node& node, const Node& other) {
    node.name_base_ = other.name_base_;
    node.name_code_ = other.name_code_;
  }
  /// Turns `node` into an output node without telling the graph.
  static void set_op(Node& node, OpKind op) { node.op_ = op; }
  /// Points `node`'s previous-node link somewhere else.
  static void set_prev_link(Node& node, NodeId prev) { node.prev_ = prev; }
  /// Points `node`'s next-node link somewhere else (an invalid id ends the order there).
  static void set_next_link(Node& node, NodeId next) { node.next_ = next; }
};

}  // namespace symtrace::detail
