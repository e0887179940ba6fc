// Graph and node text: torch.fx's `Node.format_node` form (the canonical text tests compare)
// and the table of fx's `print_tabular`. Graphviz output lives in dot.cpp.
//
// Arguments print through argument.cpp's leaf formatting; only node references differ by
// context: `%name` in a node's line, a bare `name` in a `return` line and in the table (as
// fx prints them), and `%<id>` for an id the graph does not hold.
#include "symtrace/graph/printer.hpp"

#include "symtrace/graph/argument.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/graph/node.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <string_view>
#include <vector>

namespace symtrace {

namespace {

/// How a node reference prints: fx writes `%name` inside a node's arguments and the bare
/// name in a `return` line and in `print_tabular`.
enum class NodeRefs : std::uint8_t {
  percent,
  bare
};

void append_argument(std::string& out, const Graph& graph, const Argument& arg, NodeRefs refs) {
  if (const NodeId* id = arg.get_if<NodeId>()) {
    if (const Node* node = graph.find_node(*id)) {
      if (refs == NodeRefs::percent) out += '%';
      out += node->name();
    } else {
      // A dangling reference (lint() would reject it); the id still says which node it was.
      fmt::format_to(std::back_inserter(out), "{}", *id);
    }
  } else if (const ArgumentList* list = arg.get_if<ArgumentList>()) {
    out += '[';
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (i != 0) out += ", ";
      append_argument(out, graph, (*list)[i], refs);
    }
    out += ']';
  } else {
    out += to_string(arg);
  }
}

/// A Python tuple: `()`, `(a,)`, `(a, b)`.
void append_tuple(std::string& out, const Graph& graph, const std::vector<Argument>& items, NodeRefs refs) {
  out += '(';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += ", ";
    append_argument(out, graph, items[i], refs);
  }
  if (items.size() == 1) out += ',';
  out += ')';
}

/// fx's dict form, keys unquoted: `{}`, `{dim: 1, keepdim: True}`.
void append_kwargs(std::string& out, const Graph& graph, const KeywordArguments& kwargs, NodeRefs refs) {
  out += '{';
  bool first = true;
  for (const auto& [key, value] : kwargs) {
    if (!first) out += ", ";
    first = false;
    out += key;
    out += ": ";
    append_argument(out, graph, value, refs);
  }
  out += '}';
}

void append_meta(std::string& out, const TensorMeta& meta) {
  out += name(meta.dtype);
  out += to_string(meta.shape);
}

/// A node's value type: the tensor's dtype and shape, or the number type of size arithmetic
/// (meta_keys::type). Returns false when the node has neither.
bool append_type(std::string& out, const Node& node) {
  if (const TensorMeta* meta = node.tensor_meta()) {
    append_meta(out, *meta);
    return true;
  }
  if (const Argument* type = node.meta(meta_keys::type)) {
    if (const std::string* text = type->get_if<std::string>()) {
      out += *text;
      return true;
    }
  }
  return false;
}

/// The value of an output node: a list is the tuple of the graph's results.
void append_return_value(std::string& out, const Node& node) {
  const Argument value = node.args().empty() ? Argument() : node.args().front();
  if (const ArgumentList* list = value.get_if<ArgumentList>()) {
    append_tuple(out, node.graph(), *list, NodeRefs::bare);
  } else {
    append_argument(out, node.graph(), value, NodeRefs::bare);
  }
}

/// One node in fx's `format_node` form, without indentation or newline.
void append_node(std::string& out, const Node& node) {
  if (node.op() == OpKind::output) {
    out += "return ";
    append_return_value(out, node);
    return;
  }
  const Graph& graph = node.graph();
  out += '%';
  out += node.name();
  out += " : ";
  if (append_type(out, node)) out += ' ';
  fmt::format_to(std::back_inserter(out), "[num_users={}] = {}[target={}]", node.num_users(), node.op(),
                 node.target());
  switch (node.op()) {
    case OpKind::placeholder:
      if (!node.args().empty()) {
        out += "(default=";
        append_argument(out, graph, node.args().front(), NodeRefs::percent);
        out += ')';
      }
      break;
    case OpKind::get_attr:
    case OpKind::output:
      break;
    case OpKind::call_function:
    case OpKind::call_method:
    case OpKind::call_module:
      out += "(args = ";
      append_tuple(out, graph, node.args(), NodeRefs::percent);
      out += ", kwargs = ";
      append_kwargs(out, graph, node.kwargs(), NodeRefs::percent);
      out += ')';
      break;
  }
}

}  // namespace

std::string to_string(const Node& node) {
  std::string out;
  append_node(out, node);
  return out;
}

std::string to_string(const Graph& graph) {
  std::string out = "graph():\n";
  for (const Node& node : graph.nodes()) {
    out += "    ";
    append_node(out, node);
    out += '\n';
  }
  return out;
}

std::string to_tabular(const Graph& graph) {
  // Laid out as tabulate's "simple" format, which fx's print_tabular uses: a header, a row of
  // dashes, left-aligned columns two spaces apart. Unlike tabulate, a column is exactly as wide
  // as its widest cell (header included), and no line ends in spaces.
  constexpr std::size_t columns = 6;
  using Row = std::array<std::string, columns>;
  std::vector<Row> rows;
  rows.push_back({"opcode", "name", "target", "args", "kwargs", "meta"});
  for (const Node& node : graph.nodes()) {
    Row row;
    row[0] = to_string(node.op());
    row[1] = node.name();
    row[2] = std::string(node.target());
    append_tuple(row[3], graph, node.args(), NodeRefs::bare);
    append_kwargs(row[4], graph, node.kwargs(), NodeRefs::bare);
    append_type(row[5], node);
    rows.push_back(std::move(row));
  }

  std::array<std::size_t, columns> widths{};
  for (const Row& row : rows) {
    for (std::size_t c = 0; c < columns; ++c) widths[c] = std::max(widths[c], row[c].size());
  }

  std::string out;
  auto append_row = [&](const Row& row) {
    const std::size_t start = out.size();
    for (std::size_t c = 0; c < columns; ++c) {
      if (c != 0) out += "  ";
      out += row[c];
      out.append(widths[c] - row[c].size(), ' ');
    }
    const std::size_t end = out.find_last_not_of(' ');
    out.resize(end == std::string::npos || end < start ? start : end + 1);
    out += '\n';
  };
  append_row(rows.front());
  Row dashes;
  for (std::size_t c = 0; c < columns; ++c) dashes[c] = std::string(widths[c], '-');
  append_row(dashes);
  for (std::size_t r = 1; r < rows.size(); ++r) append_row(rows[r]);
  return out;
}

}  // namespace symtrace

auto fmt::formatter<symtrace::Graph>::format(const symtrace::Graph& graph, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(graph), ctx);
}

auto fmt::formatter<symtrace::Node>::format(const symtrace::Node& node, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(node.name(), ctx);
}
