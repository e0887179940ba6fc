// Common subexpression elimination: a key per pure node (op, target, arguments in a binary
// encoding), the first node with a key kept, later ones replaced by it.
#include "symtrace/passes/cse.hpp"

#include "symtrace/passes/dead_code.hpp"

#include <cstring>
#include <string>
#include <unordered_map>

namespace symtrace {

namespace {

void append_raw(std::string& key, const void* data, std::size_t size) {
  key.append(static_cast<const char*>(data), size);
}

/// Appends an unambiguous encoding of `arg`: the alternative's index, then its value (strings
/// and lists with their length), so two keys are equal exactly when the arguments are.
void append_argument(std::string& key, const Argument& arg) {
  key.push_back(static_cast<char>(arg.value.index()));
  boost::variant2::visit(
      overloaded{
          [](boost::variant2::monostate) {},
          [&](bool b) { key.push_back(b ? '\1' : '\0'); },
          [&](std::int64_t i) { append_raw(key, &i, sizeof i); },
          [&](double d) { append_raw(key, &d, sizeof d); },  // bits: -0.0 and 0.0 differ
          [&](const detail::Boxed<std::string>& s) {
            const std::size_t n = s.get().size();
            append_raw(key, &n, sizeof n);
            key.append(s.get());
          },
          [&](DType d) { key.push_back(static_cast<char>(d)); },
          [&](NodeId id) { append_raw(key, &id, sizeof id); },
          [&](const detail::Boxed<ArgumentList>& l) {
            const std::size_t n = l.get().size();
            append_raw(key, &n, sizeof n);
            for (const Argument& item : l.get()) append_argument(key, item);
          },
      },
      arg.value);
}

bool is_pure(const Node& node) {
  if (node.op() == OpKind::get_attr) return true;
  if (node.op() != OpKind::call_function && node.op() != OpKind::call_method) return false;
  return !has_side_effects(node);
}

}  // namespace

std::size_t eliminate_common_subexpressions(Graph& graph) {
  std::size_t removed = 0;
  std::unordered_map<std::string, Node*> seen;
  std::string key;
  for (Node* node = graph.nodes().empty() ? nullptr : &*graph.nodes().begin(); node != nullptr;) {
    Node* next = node->next();
    // Note [CSE across writes]: a node that may write into a tensor (an in-place or
    // argument-writing op, an impure node, a module call, whose leaf may work in place) can
    // change what an equal-looking later node reads, so nothing before it is merged with
    // anything after it.
    if (node->op() == OpKind::call_module || (node->op() != OpKind::placeholder && has_side_effects(*node))) {
      seen.clear();
    } else if (is_pure(*node)) {
      key.clear();
      key.push_back(static_cast<char>(node->op()));
      const std::size_t n = node->target().size();
      append_raw(key, &n, sizeof n);
      key.append(node->target());
      for (const Argument& a : node->args()) append_argument(key, a);
      key.push_back('\xff');  // positional and keyword arguments apart
      for (const auto& [name, a] : node->kwargs()) {
        key.append(name);
        key.push_back('\0');
        append_argument(key, a);
      }
      auto [it, inserted] = seen.try_emplace(key, node);
      if (!inserted) {
        graph.replace_all_uses_with(*node, *it->second);
        graph.erase_node(*node);
        ++removed;
      }
    }
    node = next;
  }
  return removed;
}

}  // namespace symtrace
