// Graphviz DOT for a graph, written by Boost's write_graphviz on the read-only BGL view: one
// vertex per live node (labelled name, opcode[target], dtype[shape]), styled by opcode, with
// failed modules in red; one plain edge per use, from the input to its user.
#include "symtrace/graph/printer.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/graph/bgl.hpp"
#include "symtrace/graph/dot_escape.hpp"
#include "symtrace/graph/node.hpp"

#include <boost/graph/graphviz.hpp>
#include <fmt/format.h>

#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>

namespace symtrace {

namespace {

/// The longest failure message a label shows, "..." included.
constexpr std::size_t max_failure_length = 60;

/// `message`, cut to `max_failure_length` characters with "..." when longer (never in the
/// middle of a UTF-8 sequence).
std::string shorten(std::string message) {
  if (message.size() <= max_failure_length) return message;
  std::size_t cut = max_failure_length - 3;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xc0) == 0x80) --cut;
  message.resize(cut);
  message += "...";
  return message;
}

/// The failure message of a node whose module could not be traced, or nullopt.
std::optional<std::string> failure_of(const Node& node) {
  const Argument* failure = node.meta(meta_keys::failure);
  if (failure == nullptr) return std::nullopt;
  if (const std::string* text = failure->get_if<std::string>()) return *text;
  return to_string(*failure);
}

/// The label's text, already escaped: lines joined by DOT's `\n`.
std::string label(const Node& node, const std::optional<std::string>& failure) {
  std::string out;
  append_dot_escaped(out, node.name());
  out += "\\n";
  append_dot_escaped(out, fmt::format("{}[{}]", node.op(), node.target()));
  if (const TensorMeta* meta = node.tensor_meta()) {
    out += "\\n";
    append_dot_escaped(out, to_string(*meta));
  }
  if (failure) {
    out += "\\n";
    append_dot_escaped(out, "failed: " + shorten(*failure));
  }
  return out;
}

struct VertexStyle {
  std::string_view shape;
  std::string_view style;
  std::string_view fillcolor;
  std::string_view color;  // empty: Graphviz's default outline
};

VertexStyle style_of(const Node& node, bool failed) {
  if (failed) return {"box3d", "filled", "#f8c8c8", "#c00000"};
  switch (node.op()) {
    case OpKind::placeholder: return {"ellipse", "filled", "#d5f5d5", {}};
    case OpKind::output: return {"doubleoctagon", "filled", "#e0e0e0", {}};
    case OpKind::get_attr: return {"note", "filled", "#fff4c2", {}};
    case OpKind::call_module: return {"box3d", "filled", "#cfe2ff", {}};
    case OpKind::call_function:
    case OpKind::call_method: break;
  }
  return {"box", "rounded,filled", "#ffffff", {}};
}

/// write_graphviz's vertex property writer: `[label="...", shape=..., ...]`.
struct VertexWriter {
  const bgl::View* view;

  void operator()(std::ostream& out, bgl::Vertex v) const {
    const Node& node = bgl::node(*view, v);
    const std::optional<std::string> failure = failure_of(node);
    const VertexStyle style = style_of(node, failure.has_value());
    out << "[label=\"" << label(node, failure) << "\", shape=" << style.shape << ", style=\"" << style.style
        << "\", fillcolor=\"" << style.fillcolor << '"';
    if (!style.color.empty()) out << ", color=\"" << style.color << '"';
    out << ']';
  }
};

/// write_graphviz's graph property writer.
struct GraphWriter {
  bool left_to_right;

  void operator()(std::ostream& out) const {
    out << "rankdir=" << (left_to_right ? "LR" : "TB") << ";\n";
    out << "node [fontname=\"Helvetica\"];\n";
  }
};

}  // namespace

std::string to_dot(const Graph& graph, const DotOptions& options) {
  const bgl::View view = bgl::view(graph);
  std::ostringstream stream;
  boost::write_graphviz(stream, view, VertexWriter{&view}, boost::default_writer(),
                        GraphWriter{options.left_to_right}, bgl::index_map(view));
  std::string text = std::move(stream).str();

  // write_graphviz names every graph "G"; put the requested name, always quoted, in its place.
  constexpr std::string_view boost_header = "digraph G {";
  SYMTRACE_ASSERT(text.starts_with(boost_header), "write_graphviz changed its header line");
  std::string header = "digraph \"";
  append_dot_escaped(header, options.name);
  header += "\" {";
  text.replace(0, boost_header.size(), header);
  return text;
}

void append_dot_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
}

std::string dot_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_dot_escaped(out, text);
  return out;
}

}  // namespace symtrace
