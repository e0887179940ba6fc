// The coverage report of a GraphCollection (through its CollectionReport), as text and as JSON.
#include "symtrace/robust/coverage_report.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/robust/collection_report.hpp"
#include "symtrace/robust/graph_collection.hpp"

#include "report_render.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace symtrace {

namespace {

using json = nlohmann::ordered_json;

std::string display_path(std::string_view path) { return path.empty() ? std::string("<model>") : std::string(path); }

/// "float32[1, 8, 16, 16], int64[4]".
std::string inputs_text(const std::vector<InputSpec>& inputs) {
  std::string out;
  for (const InputSpec& s : inputs) fmt::format_to(std::back_inserter(out), "{}{}{}", out.empty() ? "" : ", ", s.dtype, s.shape);
  return out.empty() ? std::string("no inputs") : out;
}

/// A capture by execution as JSON: null when none was attempted.
json by_execution_json(const std::optional<CollectionReport::ByExecution>& x) {
  if (!x) return nullptr;
  json inputs = json::array();
  for (const InputSpec& s : x->inputs) inputs.push_back({{"dtype", fmt::format("{}", s.dtype)}, {"shape", fmt::format("{}", s.shape)}});
  json warnings = json::array();
  for (const CollectionReport::Warning& w : x->warnings) {
    warnings.push_back({{"kind", w.kind}, {"source", w.source}, {"module", w.module}, {"count", w.count}, {"message", w.message}});
  }
  return {{"nodes", x->graph ? json(x->graph->size()) : json(nullptr)},
          {"inputs", std::move(inputs)},
          {"warnings", std::move(warnings)},
          {"error", x->error.empty() ? json(nullptr) : json(x->error)}};
}

/// The report with, per module, its failure and its graph (by the module's path).
class Renderer {
 public:
  Renderer(const CollectionReport& r, const std::vector<detail::ReportGraph>& graphs) : r_(r), graphs_(graphs) {
    for (const CollectionReport::Failure& f : r.failures) failure_of_.emplace(f.module, &f);
    for (const detail::ReportGraph& g : graphs) graph_of_.emplace(g.module, &g);
    for (const detail::ReportGraph& g : graphs) total_nodes_ += g.nodes;
    for (const detail::ReportGraph& g : graphs) graph_path_sizes_.insert(g.module.size());
  }

  std::string text() const {
    std::string out;
    fmt::format_to(std::back_inserter(out), "coverage of {} ({})\n", r_.model, r_.modules[0].type);
    fmt::format_to(std::back_inserter(out), "  modules: {} ({} traced, {} leaf, {} failed, {} unvisited)\n", r_.modules.size(),
                   r_.count(ModuleStatus::traced), r_.count(ModuleStatus::leaf), r_.count(ModuleStatus::failed),
                   r_.count(ModuleStatus::unvisited));
    fmt::format_to(std::back_inserter(out), "  graphs: {} ({} nodes)\n", graphs_.size(), total_nodes_);

    out += "\nmodule tree\n";
    fmt::format_to(std::back_inserter(out), "{}\n", tree_label("<model>", r_.modules[0]));
    print_subtree(out, 0, "");

    fmt::format_to(std::back_inserter(out), "\nfailures ({})\n", r_.failures.size());
    if (r_.failures.empty()) out += "  none\n";
    for (const CollectionReport::Failure& f : r_.failures) print_failure(out, f);

    fmt::format_to(std::back_inserter(out), "\ngraphs ({})\n", graphs_.size());
    for (const detail::ReportGraph& g : graphs_) {
      fmt::format_to(std::back_inserter(out), "  {} ({}): {} nodes\n", display_path(g.module), g.type, g.nodes);
    }

    fmt::format_to(std::back_inserter(out), "\nunvisited ({})\n", r_.count(ModuleStatus::unvisited));
    if (r_.count(ModuleStatus::unvisited) == 0) out += "  none\n";
    for (const CollectionReport::ModuleEntry& m : r_.modules) {
      if (m.status == ModuleStatus::unvisited) fmt::format_to(std::back_inserter(out), "  {} ({})\n", display_path(m.path), m.type);
    }
    return out;
  }

  std::string json_text() const {
    json doc = json::object();
    doc["model"] = r_.model;
    json graphs = json::array();
    for (const detail::ReportGraph& g : graphs_) {
      graphs.push_back({{"module", g.module}, {"type", g.type}, {"nodes", g.nodes}});
    }
    doc["graphs"] = std::move(graphs);
    json failed = json::array();
    for (const CollectionReport::Failure& f : r_.failures) {
      failed.push_back({{"module", f.module},
                        {"type", f.type},
                        {"kind", f.kind},
                        {"message", f.message},
                        {"source", f.source.empty() ? json(nullptr) : json(f.source)},
                        {"op", f.op.empty() ? json(nullptr) : json(f.op)},
                        {"by_execution", by_execution_json(f.by_execution)}});
    }
    doc["failed"] = std::move(failed);
    json unvisited = json::array();
    json modules = json::array();
    for (const CollectionReport::ModuleEntry& m : r_.modules) {
      if (m.status == ModuleStatus::unvisited) unvisited.push_back(m.path);
      modules.push_back({{"module", m.path}, {"type", m.type}, {"status", to_string(m.status)}});
    }
    doc["unvisited"] = std::move(unvisited);
    doc["modules"] = std::move(modules);
    doc["totals"] = {{"modules", r_.modules.size()},
                     {"traced", r_.count(ModuleStatus::traced)},
                     {"leaf", r_.count(ModuleStatus::leaf)},
                     {"failed", r_.count(ModuleStatus::failed)},
                     {"unvisited", r_.count(ModuleStatus::unvisited)},
                     {"graphs", graphs_.size()},
                     {"nodes", total_nodes_}};
    // Messages may hold bytes that are not UTF-8 (an exception's text): replaced, never a throw.
    return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }

 private:
  template <class T>
  static const T* lookup(const std::unordered_map<std::string_view, const T*>& map, std::string_view path) {
    auto it = map.find(path);
    return it == map.end() ? nullptr : it->second;
  }

  /// One line of the module tree: "name (Type)  status", with the failure's location.
  std::string tree_label(std::string_view name, const CollectionReport::ModuleEntry& m) const {
    std::string line = fmt::format("{} ({})  {}", name, m.type, m.status);
    if (m.status == ModuleStatus::failed) {
      if (const CollectionReport::Failure* f = lookup(failure_of_, m.path)) {
        fmt::format_to(std::back_inserter(line), ": {}{}{}", f->kind, f->source.empty() ? "" : " at ", f->source);
      }
    }
    // Only a path as long as a graph's is looked up: a chain of n modules has paths of O(n^2)
    // characters in all, and hashing each would cost that much.
    if (const detail::ReportGraph* g = graph_path_sizes_.contains(m.path.size()) ? lookup(graph_of_, m.path) : nullptr) {
      fmt::format_to(std::back_inserter(line), "  [graph: {} nodes]", g->nodes);
    }
    return line;
  }

  /// The subtree under the module at `index`, children indented under it: depth first, in a
  /// loop (a chain of 10,000 modules is 10,000 levels deep). A module registered under a
  /// second name is listed there once, as a reference: it was listed before, at its first path
  /// (the walk visits modules in the hierarchy's order), which the check reads by index
  /// instead of comparing paths. Past `max_indent` levels, lines are indented no further and
  /// say their depth ("[40] "): a line stays short however deep the model is.
  void print_subtree(std::string& out, std::size_t index, std::string_view indent) const {
    constexpr std::size_t max_indent = 32;
    struct Level {
      std::size_t module;
      std::size_t next_child = 0;
      std::size_t indent_size;  // of `prefix` for its children
    };
    std::string prefix(indent);
    std::vector<char> listed(r_.modules.size(), 0);
    if (index < listed.size()) listed[index] = 1;
    std::vector<Level> stack{{index, 0, prefix.size()}};
    while (!stack.empty()) {
      Level& level = stack.back();
      const CollectionReport::ModuleEntry& m = r_.modules[level.module];
      if (level.next_child == m.children.size()) {
        stack.pop_back();
        continue;
      }
      const CollectionReport::Child& child = m.children[level.next_child++];
      const bool last = level.next_child == m.children.size();
      prefix.resize(level.indent_size);
      const std::size_t depth = stack.size();
      if (depth > max_indent) fmt::format_to(std::back_inserter(out), "{}[{}] {}", prefix, depth, last ? "└── " : "├── ");
      else fmt::format_to(std::back_inserter(out), "{}{}", prefix, last ? "└── " : "├── ");
      if (child.index >= r_.modules.size()) {
        fmt::format_to(std::back_inserter(out), "{} (?)  not in the report\n", child.name);
        continue;
      }
      const CollectionReport::ModuleEntry& cm = r_.modules[child.index];
      if (listed[child.index] != 0) {
        fmt::format_to(std::back_inserter(out), "{} ({})  the module at '{}'\n", child.name, cm.type, cm.path);
        continue;
      }
      listed[child.index] = 1;
      fmt::format_to(std::back_inserter(out), "{}\n", tree_label(child.name, cm));
      if (depth < max_indent) prefix += last ? "    " : "│   ";
      stack.push_back(Level{child.index, 0, prefix.size()});
    }
  }

  static void print_failure(std::string& out, const CollectionReport::Failure& f) {
    fmt::format_to(std::back_inserter(out), "  {} ({}){}{}\n", display_path(f.module), f.type, f.source.empty() ? "" : " at ",
                   f.source);
    // The message of a TraceError starts with the location printed above: not twice.
    std::string_view message = f.message;
    if (!f.source.empty() && message.starts_with(f.source + ": ")) message.remove_prefix(f.source.size() + 2);
    fmt::format_to(std::back_inserter(out), "    {}: {}\n", f.kind, message);
    if (!f.op.empty()) fmt::format_to(std::back_inserter(out), "    the op that failed: {}\n", f.op);
    if (!f.by_execution) return;
    const CollectionReport::ByExecution& x = *f.by_execution;
    if (!x.graph) {
      fmt::format_to(std::back_inserter(out), "    not captured by execution: {}\n", x.error);
      return;
    }
    fmt::format_to(std::back_inserter(out), "    captured by execution on {}: {} nodes, specialised ({} {})\n",
                   inputs_text(x.inputs), x.graph->size(), x.warnings.size(),
                   x.warnings.size() == 1 ? "place reads tensor data" : "places read tensor data");
    for (const CollectionReport::Warning& w : x.warnings) {
      fmt::format_to(std::back_inserter(out), "      {} {} ({} {})\n", w.source, w.kind, w.count, w.count == 1 ? "time" : "times");
    }
  }

  const CollectionReport& r_;
  const std::vector<detail::ReportGraph>& graphs_;
  std::size_t total_nodes_ = 0;
  std::unordered_map<std::string_view, const CollectionReport::Failure*> failure_of_;
  std::unordered_map<std::string_view, const detail::ReportGraph*> graph_of_;
  std::unordered_set<std::size_t> graph_path_sizes_;
};

}  // namespace

namespace detail {

std::string render_report(const CollectionReport& report, const std::vector<ReportGraph>& graphs, ReportFormat format,
                          std::source_location where) {
  switch (format) {
    case ReportFormat::text: return Renderer(report, graphs).text();
    case ReportFormat::json: return Renderer(report, graphs).json_text();
  }
  throw_invalid_argument(where, "coverage_report was given an unknown format ({}): use ReportFormat::text or json",
                         static_cast<int>(format));
}

}  // namespace detail

std::string coverage_report(const CollectionReport& report, ReportFormat format, std::source_location where) {
  if (report.modules.empty()) {
    throw_invalid_argument(where, "coverage_report was given a CollectionReport without modules: make it with "
                                  "make_report or report_from_json");
  }
  std::vector<detail::ReportGraph> graphs;
  graphs.reserve(report.graphs.size());
  for (const CollectionReport::GraphEntry& g : report.graphs) graphs.push_back({g.module, g.type, g.graph.size()});
  return detail::render_report(report, graphs, format, where);
}

std::string coverage_report(const GraphCollection& collection, std::string_view model_name, ReportFormat format,
                            std::source_location where) {
  if (collection.size() == 0 || collection.hierarchy().empty()) {
    throw_invalid_argument(where, "coverage_report was given a GraphCollection that holds no trace: call "
                                  "recursive_trace first");
  }
  // The graphs are printed in place: the report is made without copies of them.
  const CollectionReport report = detail::describe_collection(collection, model_name, false, where);
  std::vector<detail::ReportGraph> graphs;
  graphs.reserve(collection.size());
  for (const GraphCollection::Entry& e : collection) graphs.push_back({e.path, e.module->type_name(), e.graph.size()});
  return detail::render_report(report, graphs, format, where);
}

}  // namespace symtrace
