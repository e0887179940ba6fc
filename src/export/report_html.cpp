// The HTML report: the report's facts gathered into one JSON object for the page's script, every
// graph laid out by one run of graphviz's dot (all graphs in one DOT file, read back in its
// `plain` form: node centres and sizes, edge splines), and the page (report_page.cpp) put
// around it. The page draws what it is given; every decision about what a module links to,
// which source lines to show and what a total is, is made here, where it can be tested.
//
// Note [Text in the page]: the data goes into a <script type="application/json"> element with
// every '<', '>' and '&' written as \u003c, \u003e, \u0026. Those characters only occur inside
// JSON strings, so the escaped text is the same JSON, and nothing a model names (a module
// called "</script>", a message quoting code) can close the element or start markup. The page
// puts text in with textContent and setAttribute only. The one piece of the model written as
// HTML, the title, is escaped here.
#include "symtrace/export/report_html.hpp"

#include "report_page.hpp"
#include "symtrace/export/graphviz.hpp"
#include "symtrace/graph/dot_escape.hpp"
#include "symtrace/graph/node.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace symtrace {
namespace {

using PageJson = nlohmann::json;

/// A graph the page draws: a module's graph, or a failed module's capture by execution.
struct PageGraph {
  const Graph* graph = nullptr;
  std::size_t module = 0;  ///< the module it belongs to (index in report.modules)
  bool by_execution = false;
};

/// `text` with the characters HTML gives meaning to escaped, for the page's title.
std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

/// The JSON text with '<', '>' and '&' as \u escapes (Note [Text in the page]); bytes that are
/// not UTF-8 (an exception's message may hold any) are replaced, never a throw.
std::string script_json(const PageJson& data) {
  const std::string text = data.dump(-1, ' ', false, PageJson::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

/// The second line of a node's box: fx's `op[target]`.
std::string op_text(const Node& node) { return fmt::format("{}[{}]", node.op(), node.target()); }

/// The third line: `float32[1, 64, 56, 56]`, a value's type (`int`), or "".
std::string meta_text(const Node& node) {
  if (const TensorMeta* meta = node.tensor_meta()) return to_string(*meta);
  if (const Argument* type = node.meta(meta_keys::type))
    if (const std::string* text = type->get_if<std::string>()) return *text;
  return {};
}

// Note [Large graphs in pieces]: dot's layout takes time that grows faster than the square of
// a graph's size (0.16 s for 500 nodes of deep_mlp, 18 s for 4,000; deep_mlp_10000's 40,002
// nodes run it out of memory). So a graph is laid out in pieces of at most `piece_size`
// consecutive nodes (graph order is topological), each piece by dot, stacked top to bottom;
// a use that crosses pieces is drawn as a curve from its input's box down to its user's. A
// graph up to `piece_size` nodes, every graph of resnet50 or vit_b16, is one piece.
constexpr std::size_t piece_size = 300;
/// Points between two pieces of a graph.
constexpr double piece_gap = 40;

/// A graph's nodes in order, and its uses as (input, user) positions in that order, ordered by
/// user.
struct GraphNodes {
  std::vector<const Node*> nodes;
  std::vector<std::pair<std::size_t, std::size_t>> uses;
  explicit GraphNodes(const Graph& graph) {
    std::unordered_map<NodeId, std::size_t> index;
    for (const Node& n : graph.nodes()) {
      index.emplace(n.id(), nodes.size());
      nodes.push_back(&n);
    }
    for (std::size_t user = 0; user < nodes.size(); ++user)
      for (const Node* input : nodes[user]->input_nodes()) uses.emplace_back(index.at(input->id()), user);
  }
};

/// Consecutive nodes [begin, end) of a graph, laid out by one run of dot's layout.
struct Piece {
  std::size_t graph = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// One DOT graph per piece, nodes named n0, n1, ... in graph order from the piece's first,
/// each labelled with the lines the page writes in it, so that dot sizes the boxes for them.
std::string layout_dot(const std::vector<GraphNodes>& graphs, const std::vector<Piece>& pieces) {
  std::string out;
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const Piece& piece = pieces[p];
    const GraphNodes& g = graphs[piece.graph];
    out += fmt::format("digraph p{} {{\ngraph [rankdir=TB, nodesep=0.25, ranksep=0.3];\n", p);
    out += "node [shape=box, fontname=\"Helvetica\", fontsize=10, margin=\"0.1,0.04\"];\n";
    for (std::size_t i = piece.begin; i < piece.end; ++i) {
      const Node& n = *g.nodes[i];
      out += fmt::format("n{} [label=\"", i - piece.begin);
      append_dot_escaped(out, n.name());
      out += "\\n";
      append_dot_escaped(out, op_text(n));
      if (const std::string meta = meta_text(n); !meta.empty()) {
        out += "\\n";
        append_dot_escaped(out, meta);
      }
      out += "\"];\n";
    }
    // The piece's users' uses (`uses` is in user order), each drawn when its input is here too.
    const auto first =
        std::partition_point(g.uses.begin(), g.uses.end(), [&](const auto& u) { return u.second < piece.begin; });
    for (auto u = first; u != g.uses.end() && u->second < piece.end; ++u)
      if (u->first >= piece.begin) out += fmt::format("n{} -> n{};\n", u->first - piece.begin, u->second - piece.begin);
    out += "}\n";
  }
  return out;
}

/// A layout: per node its centre and size, per edge its spline (a start point and cubic
/// Béziers), all in points with y growing downwards (SVG's direction).
struct Layout {
  double width = 0;
  double height = 0;
  std::vector<std::array<double, 4>> nodes;  ///< x, y, w, h
  std::vector<std::vector<double>> edges;    ///< x0, y0, x1, y1, ...
  std::size_t seen = 0;                      ///< nodes read from dot's output
};

/// The next whitespace-separated token of `line` at `pos` (a double-quoted token whole).
std::string_view next_token(std::string_view line, std::size_t& pos) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  const std::size_t start = pos;
  if (pos < line.size() && line[pos] == '"') {
    for (++pos; pos < line.size() && line[pos] != '"'; ++pos)
      if (line[pos] == '\\') ++pos;
    pos = std::min(pos + 1, line.size());
  } else {
    while (pos < line.size() && line[pos] != ' ') ++pos;
  }
  return line.substr(start, std::min(pos, line.size()) - start);
}

double number(std::string_view token) {
  double v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size())
    throw std::runtime_error(fmt::format("graphviz's dot wrote '{}' where a number belongs", token));
  return v;
}

/// The index in `n<index>`.
std::size_t node_index(std::string_view token, std::size_t count) {
  std::size_t v = count;
  if (token.size() > 1 && token[0] == 'n') {
    const auto [end, ec] = std::from_chars(token.data() + 1, token.data() + token.size(), v);
    if (ec != std::errc() || end != token.data() + token.size()) v = count;
  }
  if (v >= count) throw std::runtime_error(fmt::format("graphviz's dot wrote an unknown node '{}'", token));
  return v;
}

/// The layouts in dot's `plain` output of `layout_dot(graphs, pieces)`: one "graph ... stop"
/// block per piece, in order. Coordinates are inches with y upwards; they become points, y
/// downwards.
std::vector<Layout> read_plain(std::string_view text, const std::vector<Piece>& pieces) {
  constexpr double points = 72.0;
  std::vector<Layout> layouts;
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t end = text.find('\n', line_start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(line_start, end - line_start);
    line_start = end + 1;
    std::size_t pos = 0;
    const std::string_view kind = next_token(line, pos);
    if (kind == "graph") {
      if (layouts.size() == pieces.size()) throw std::runtime_error("graphviz's dot wrote more graphs than it was given");
      const Piece& piece = pieces[layouts.size()];
      Layout& l = layouts.emplace_back();
      (void)next_token(line, pos);  // scale
      l.width = number(next_token(line, pos)) * points;
      l.height = number(next_token(line, pos)) * points;
      l.nodes.resize(piece.end - piece.begin);
    } else if (kind == "node" || kind == "edge") {
      if (layouts.empty()) throw std::runtime_error("graphviz's dot wrote a node before its graph");
      Layout& l = layouts.back();
      if (kind == "node") {
        const std::size_t i = node_index(next_token(line, pos), l.nodes.size());
        const double x = number(next_token(line, pos));
        const double y = number(next_token(line, pos));
        const double w = number(next_token(line, pos));
        const double h = number(next_token(line, pos));
        l.nodes[i] = {x * points, l.height - y * points, w * points, h * points};
        ++l.seen;
      } else {
        (void)next_token(line, pos);  // tail
        (void)next_token(line, pos);  // head
        const double n = number(next_token(line, pos));
        std::vector<double>& e = l.edges.emplace_back();
        for (int k = 0; k < static_cast<int>(n); ++k) {
          e.push_back(number(next_token(line, pos)) * points);
          e.push_back(l.height - number(next_token(line, pos)) * points);
        }
      }
    }
  }
  if (layouts.size() != pieces.size())
    throw std::runtime_error(fmt::format("graphviz's dot laid out {} of {} graphs", layouts.size(), pieces.size()));
  for (const Layout& l : layouts)
    if (l.seen != l.nodes.size())
      throw std::runtime_error(fmt::format("graphviz's dot placed {} of {} nodes of a graph", l.seen, l.nodes.size()));
  return layouts;
}

/// The layout of each graph: its pieces' layouts stacked, and its uses across pieces drawn
/// (Note [Large graphs in pieces]). Runs dot once for all graphs.
std::vector<Layout> lay_out(const std::vector<PageGraph>& page_graphs, const std::string& dot) {
  std::vector<GraphNodes> graphs;
  std::vector<Piece> pieces;
  for (std::size_t g = 0; g < page_graphs.size(); ++g) {
    const GraphNodes& nodes = graphs.emplace_back(*page_graphs[g].graph);
    for (std::size_t begin = 0; begin < nodes.nodes.size(); begin += piece_size)
      pieces.push_back(Piece{g, begin, std::min(nodes.nodes.size(), begin + piece_size)});
  }
  if (pieces.empty()) return std::vector<Layout>(page_graphs.size());
  const std::vector<Layout> laid = read_plain(run_dot(dot, layout_dot(graphs, pieces), "plain"), pieces);
  std::vector<Layout> layouts(page_graphs.size());
  std::vector<std::size_t> piece_of;
  for (std::size_t g = 0, p = 0; g < page_graphs.size(); ++g) {
    Layout& l = layouts[g];
    l.nodes.resize(graphs[g].nodes.size());
    const std::size_t first = p;
    for (std::size_t q = p; q < pieces.size() && pieces[q].graph == g; ++q) l.width = std::max(l.width, laid[q].width);
    piece_of.assign(graphs[g].nodes.size(), 0);
    for (; p < pieces.size() && pieces[p].graph == g; ++p) {
      const Layout& piece = laid[p];
      const double dx = (l.width - piece.width) / 2;
      const double dy = p == first ? 0.0 : l.height + piece_gap;
      for (std::size_t i = 0; i < piece.nodes.size(); ++i) {
        const auto& [x, y, w, h] = piece.nodes[i];
        l.nodes[pieces[p].begin + i] = {x + dx, y + dy, w, h};
        piece_of[pieces[p].begin + i] = p;
      }
      for (const std::vector<double>& e : piece.edges) {
        std::vector<double>& moved = l.edges.emplace_back(e);
        for (std::size_t k = 0; k < moved.size(); k += 2) {
          moved[k] += dx;
          moved[k + 1] += dy;
        }
      }
      l.height = dy + piece.height;
    }
    // A use across pieces: down from the bottom of its input's box to just above its user's,
    // where the arrowhead (10 points, as dot draws them) ends on the box.
    for (const auto& [input, user] : graphs[g].uses) {
      if (piece_of[input] == piece_of[user]) continue;
      const auto& [x0, y0, w0, h0] = l.nodes[input];
      const auto& [x1, y1, w1, h1] = l.nodes[user];
      const double top = y0 + h0 / 2;
      const double bottom = y1 - h1 / 2 - 10;
      const double bend = std::max(20.0, (bottom - top) / 3);
      l.edges.push_back({x0, top, x0, top + bend, x1, bottom - bend, x1, bottom});
    }
  }
  return layouts;
}

/// Rounded to tenths of a point: the page stays small and the drawing exact to the eye.
PageJson coordinate(double v) { return std::round(v * 10.0) / 10.0; }

/// True for a file a failure's source may name: C++ or Python source. A saved report may name
/// any path; the page embeds lines of program source only, never of other files it can read.
bool is_source_file(const std::filesystem::path& path) {
  static constexpr std::string_view extensions[] = {".cpp", ".cc", ".cxx", ".c", ".hpp", ".hh", ".hxx", ".h", ".ipp",
                                                    ".inl", ".py"};
  const std::string extension = path.extension().string();
  return std::find(std::begin(extensions), std::end(extensions), extension) != std::end(extensions);
}

/// The source lines around `source` ("file:line"), when the file is readable now: {"file",
/// "line", "first", "lines": [...]}, else null.
PageJson source_snippet(const std::string& source, const HtmlReportOptions& options,
                        std::unordered_map<std::string, std::vector<std::string>>& files) {
  const std::size_t colon = source.rfind(':');
  if (colon == std::string::npos || colon == 0) return nullptr;
  std::size_t line = 0;
  const auto [end, ec] = std::from_chars(source.data() + colon + 1, source.data() + source.size(), line);
  if (ec != std::errc() || end != source.data() + source.size() || line == 0) return nullptr;
  const std::string file = source.substr(0, colon);
  auto it = files.find(file);
  if (it == files.end()) {
    std::vector<std::string> lines;
    namespace fs = std::filesystem;
    constexpr std::uintmax_t max_file_size = std::uintmax_t{16} << 20;
    std::vector<fs::path> candidates;
    if (fs::path(file).is_absolute()) {
      candidates.emplace_back(file);
    } else {
      for (const std::string& root : options.source_roots) candidates.push_back(fs::path(root) / file);
    }
    for (const fs::path& p : candidates) {
      std::error_code error;
      if (!is_source_file(p) || !fs::is_regular_file(p, error) || fs::file_size(p, error) > max_file_size) continue;
      std::ifstream in(p, std::ios::binary);
      for (std::string l; std::getline(in, l);) {
        if (!l.empty() && l.back() == '\r') l.pop_back();
        lines.push_back(std::move(l));
      }
      break;
    }
    it = files.emplace(file, std::move(lines)).first;
  }
  const std::vector<std::string>& lines = it->second;
  if (line > lines.size()) return nullptr;
  constexpr std::size_t max_line_length = 400;
  const std::size_t first = line > options.source_context ? line - options.source_context : 1;
  const std::size_t last = std::min(lines.size(), line + options.source_context);
  PageJson text = PageJson::array();
  for (std::size_t i = first; i <= last; ++i) {
    const std::string& l = lines[i - 1];
    text.push_back(l.size() > max_line_length ? l.substr(0, max_line_length) + "…" : l);
  }
  return PageJson{{"file", file}, {"line", line}, {"first", first}, {"lines", std::move(text)}};
}

/// The page's data (see report_page.cpp for how each field is drawn).
class PageData {
 public:
  PageData(const CollectionReport& report, const HtmlReportOptions& options) : report_(report), options_(options) {
    if (report.modules.empty()) throw std::invalid_argument("report_to_html: the report has no modules");
    for (std::size_t i = 0; i < report.modules.size(); ++i) by_path_.emplace(report.modules[i].path, i);
    graph_of_.assign(report.modules.size(), -1);
    failure_of_.assign(report.modules.size(), -1);
    for (const CollectionReport::GraphEntry& g : report.graphs) {
      const std::size_t m = module_at(g.module);
      graph_of_[m] = static_cast<std::ptrdiff_t>(graphs_.size());
      graphs_.push_back(PageGraph{&g.graph, m, false});
    }
    for (std::size_t f = 0; f < report.failures.size(); ++f) failure_of_[module_at(report.failures[f].module)] = static_cast<std::ptrdiff_t>(f);
    capture_of_.assign(report.failures.size(), -1);
    for (std::size_t f = 0; f < report.failures.size(); ++f) {
      const auto& by_execution = report.failures[f].by_execution;
      if (by_execution && by_execution->graph) {
        capture_of_[f] = static_cast<std::ptrdiff_t>(graphs_.size());
        graphs_.push_back(PageGraph{&*by_execution->graph, module_at(report.failures[f].module), true});
      }
    }
    if (options.summary != nullptr)
      for (const ModuleSummary& s : options.summary->modules) summary_of_.emplace(s.path, &s);
  }

  PageJson json() const {
    std::string dot = options_.dot_program.empty() ? find_dot_program() : options_.dot_program;
    if (dot.empty())
      throw std::runtime_error("the HTML report lays out its graphs with graphviz's dot, which is not on PATH; "
                               "install graphviz (apt install graphviz)");
    const std::vector<Layout> layouts = lay_out(graphs_, dot);
    PageJson data{{"model", report_.model}, {"totals", totals()}, {"modules", modules()}, {"failures", failures()}};
    PageJson graphs = PageJson::array();
    for (std::size_t g = 0; g < graphs_.size(); ++g) graphs.push_back(graph(graphs_[g], layouts[g]));
    data["graphs"] = std::move(graphs);
    return data;
  }

 private:
  std::size_t module_at(const std::string& path) const {
    const auto it = by_path_.find(path);
    if (it == by_path_.end())
      throw std::invalid_argument(fmt::format("report_to_html: the report names a module '{}' it does not list", path));
    return it->second;
  }

  PageJson totals() const {
    PageJson t{{"modules", report_.modules.size()},
               {"traced", report_.count(ModuleStatus::traced)},
               {"leaf", report_.count(ModuleStatus::leaf)},
               {"failed", report_.count(ModuleStatus::failed)},
               {"unvisited", report_.count(ModuleStatus::unvisited)},
               {"graphs", report_.graphs.size()},
               {"nodes", report_.total_nodes()}};
    if (const ModelSummary* s = options_.summary) {
      t["parameters"] = format_count(SymExpr(s->parameters));
      t["macs"] = (s->complete ? "" : "≥ ") + format_count(s->macs);
    }
    return t;
  }

  PageJson modules() const {
    PageJson out = PageJson::array();
    for (std::size_t i = 0; i < report_.modules.size(); ++i) {
      const CollectionReport::ModuleEntry& m = report_.modules[i];
      PageJson children = PageJson::array();
      PageJson names = PageJson::array();
      for (const CollectionReport::Child& c : m.children) {
        children.push_back(c.index);
        names.push_back(c.name);
      }
      // clang-format off
      PageJson entry{{"path", m.path}, {"type", m.type}, {"status", std::string(to_string(m.status))},
                 {"parent", parent_of(i)}, {"children", std::move(children)}, {"names", std::move(names)}};
      // clang-format on
      if (graph_of_[i] >= 0) {
        entry["graph"] = graph_of_[i];
        entry["nodes"] = graphs_[static_cast<std::size_t>(graph_of_[i])].graph->size();
      }
      if (failure_of_[i] >= 0) entry["failure"] = failure_of_[i];
      if (const auto it = summary_of_.find(m.path); it != summary_of_.end()) {
        const ModuleSummary& s = *it->second;
        entry["parameters"] = format_count(SymExpr(s.parameters));
        if (s.macs) entry["macs"] = (s.complete ? "" : "≥ ") + format_count(*s.macs);
      }
      out.push_back(std::move(entry));
    }
    return out;
  }

  PageJson failures() const {
    std::unordered_map<std::string, std::vector<std::string>> files;
    PageJson out = PageJson::array();
    for (std::size_t f = 0; f < report_.failures.size(); ++f) {
      const CollectionReport::Failure& r = report_.failures[f];
      // clang-format off
      PageJson entry{{"module", module_at(r.module)}, {"kind", r.kind},   {"message", r.message},
                 {"source", r.source},            {"op", r.op},       {"snippet", source_snippet(r.source, options_, files)}};
      // clang-format on
      if (r.by_execution) {
        const CollectionReport::ByExecution& b = *r.by_execution;
        PageJson inputs = PageJson::array();
        for (const InputSpec& in : b.inputs) inputs.push_back(fmt::format("{}{}", in.dtype, to_string(in.shape)));
        PageJson warnings = PageJson::array();
        for (const CollectionReport::Warning& w : b.warnings) {
          // clang-format off
          warnings.push_back(PageJson{{"kind", w.kind}, {"source", w.source}, {"module", w.module}, {"count", w.count},
                                  {"message", w.message}});
          // clang-format on
        }
        entry["by_execution"] = PageJson{{"graph", capture_of_[f] >= 0 ? PageJson(capture_of_[f]) : PageJson(nullptr)},
                                         {"inputs", std::move(inputs)},
                                         {"warnings", std::move(warnings)},
                                         {"error", b.error}};
      }
      out.push_back(std::move(entry));
    }
    return out;
  }

  /// The module whose path is `modules[i]`'s without its last name, when it holds module i as
  /// a child (else -1, and -1 for the model): the parent on the path the report names the
  /// module by (a shared module has several parents).
  std::ptrdiff_t parent_of(std::size_t i) const {
    if (i == 0) return -1;
    const std::string& path = report_.modules[i].path;
    const std::size_t dot = path.rfind('.');
    const auto it = by_path_.find(dot == std::string::npos ? std::string() : path.substr(0, dot));
    if (it == by_path_.end()) return -1;
    // A saved report's paths are not checked against its tree: the parent must hold the module.
    const auto& children = report_.modules[it->second].children;
    const bool holds = std::any_of(children.begin(), children.end(), [&](const auto& c) { return c.index == i; });
    return holds ? static_cast<std::ptrdiff_t>(it->second) : -1;
  }

  /// The module a `call_module` node of a graph of module `owner` calls, found by walking its
  /// target's names down the children (so a shared module is found by any of its paths).
  std::optional<std::size_t> called_module(std::size_t owner, std::string_view target) const {
    std::size_t m = owner;
    while (!target.empty()) {
      const std::size_t dot = target.find('.');
      const std::string_view name = target.substr(0, dot);
      target = dot == std::string_view::npos ? std::string_view() : target.substr(dot + 1);
      const auto& children = report_.modules[m].children;
      const auto it = std::find_if(children.begin(), children.end(), [&](const auto& c) { return c.name == name; });
      if (it == children.end()) return std::nullopt;
      m = it->index;
    }
    return m;
  }

  /// A graph for the page: {"module", "by_execution", "width", "height", "nodes": [[x, y, w, h,
  /// op, name, op[target], meta, link, failed]...], "edges": [[x0, y0, ...]...]}. `link` is the
  /// module a call_module node calls when that module has a graph or a failure to show, else -1.
  /// (Targets are relative to the graph's module, a capture by execution's to its failed one.)
  PageJson graph(const PageGraph& g, const Layout& layout) const {
    PageJson nodes = PageJson::array();
    std::size_t i = 0;
    for (const Node& n : g.graph->nodes()) {
      const auto& [x, y, w, h] = layout.nodes[i++];
      std::ptrdiff_t link = -1;
      // (A leaf traced as a root calls itself, target "": no link to the graph one is reading.)
      if (n.op() == OpKind::call_module && !n.target().empty()) {
        if (const std::optional<std::size_t> m = called_module(g.module, n.target()))
          if (graph_of_[*m] >= 0 || failure_of_[*m] >= 0) link = static_cast<std::ptrdiff_t>(*m);
      }
      nodes.push_back(PageJson::array({coordinate(x), coordinate(y), coordinate(w), coordinate(h),
                                       std::string(fmt::format("{}", n.op())), n.name(), op_text(n), meta_text(n), link,
                                       n.meta(meta_keys::failure) != nullptr ? 1 : 0}));
    }
    PageJson edges = PageJson::array();
    for (const std::vector<double>& e : layout.edges) {
      PageJson points = PageJson::array();
      for (double v : e) points.push_back(coordinate(v));
      edges.push_back(std::move(points));
    }
    // clang-format off
    return PageJson{{"module", g.module},           {"by_execution", g.by_execution}, {"width", coordinate(layout.width)},
                {"height", coordinate(layout.height)}, {"nodes", std::move(nodes)},      {"edges", std::move(edges)}};
    // clang-format on
  }

  const CollectionReport& report_;
  const HtmlReportOptions& options_;
  std::unordered_map<std::string, std::size_t> by_path_;
  std::vector<PageGraph> graphs_;
  std::vector<std::ptrdiff_t> graph_of_;    ///< per module: its graph's index, or -1
  std::vector<std::ptrdiff_t> failure_of_;  ///< per module: its failure's index, or -1
  std::vector<std::ptrdiff_t> capture_of_;  ///< per failure: its capture's graph index, or -1
  std::unordered_map<std::string, const ModuleSummary*> summary_of_;
};

}  // namespace

std::string report_to_html(const CollectionReport& report, const HtmlReportOptions& options) {
  const PageJson data = PageData(report, options).json();
  std::string page;
  page += detail::report_page_head;
  // The model's name as valid UTF-8 (a file name may hold any bytes), then escaped.
  const std::string model = PageJson::parse(PageJson(report.model).dump(-1, ' ', false, PageJson::error_handler_t::replace));
  page += fmt::format("<title>{} · symtrace report</title>\n", html_escape(model));
  page += detail::report_page_style;
  page += detail::report_page_body;
  page += "<script type=\"application/json\" id=\"report-data\">";
  page += script_json(data);
  page += "</script>\n";
  page += detail::report_page_script;
  return page;
}

std::string report_to_html(const GraphCollection& collection, std::string_view model_name,
                           const HtmlReportOptions& options) {
  return report_to_html(make_report(collection, model_name), options);
}

}  // namespace symtrace
