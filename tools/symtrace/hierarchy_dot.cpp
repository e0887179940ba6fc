// The module hierarchy as Graphviz DOT, written by Boost's write_graphviz.
#include "hierarchy_dot.hpp"

#include <symtrace/graph/dot_escape.hpp>
#include <symtrace/robust/module_hierarchy_bgl.hpp>

#include <boost/graph/graphviz.hpp>
#include <fmt/format.h>

#include <sstream>

namespace symtrace::cli {
namespace {

std::string_view fill(ModuleStatus status) {
  switch (status) {
    case ModuleStatus::traced: return "#b7e4b0";
    case ModuleStatus::leaf: return "#bcd7f0";
    case ModuleStatus::failed: return "#f4a6a0";
    case ModuleStatus::unvisited: return "#e0e0e0";
  }
  return "white";
}

struct VertexWriter {
  const bgl::HierarchyGraph* graph;
  const ModuleHierarchy* hierarchy;
  std::string_view model;
  template <class Vertex>
  void operator()(std::ostream& out, Vertex v) const {
    const ModuleRecord& r = (*graph)[v];
    const std::string path = hierarchy->path(v);
    std::string label = fmt::format("{}\\n{}\\n{}", dot_escape(path.empty() ? model : std::string_view(path)),
                                    dot_escape(r.type), r.status);
    if (r.failure != nullptr && r.failure->where.line() != 0) {
      label += fmt::format(" at {}:{}", dot_escape(r.failure->where.file_name()), r.failure->where.line());
    }
    if (r.graph != nullptr) label += fmt::format("\\ngraph: {} nodes", r.graph->size());
    out << fmt::format("[label=\"{}\", fillcolor=\"{}\"{}]", label, fill(r.status),
                       r.status == ModuleStatus::failed ? ", penwidth=2, color=\"#b03a2e\"" : "");
  }
};

struct GraphWriter {
  std::string_view model;
  void operator()(std::ostream& out) const {
    out << fmt::format("label=\"module hierarchy of {}: traced green, leaf blue, failed red, unvisited grey\";\n",
                       dot_escape(model));
    out << "labelloc=t;\nrankdir=LR;\nfontname=\"Helvetica\";\n"
           "node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n";
  }
};

}  // namespace

std::string hierarchy_dot(const GraphCollection& collection, std::string_view model) {
  const bgl::HierarchyGraph& g = bgl::graph(collection.hierarchy());
  std::ostringstream out;
  boost::write_graphviz(out, g, VertexWriter{&g, &collection.hierarchy(), model}, boost::default_writer(), GraphWriter{model});
  return out.str();
}

}  // namespace symtrace::cli
