// The coverage report of a GraphCollection (through its CollectionReport), as text and as JSON.
#include "symtrace/robust/coverage_report.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/robust/collection_report.hpp"
#include "symtrace/robust/detail/failure_json.hpp"
#include "symtrace/robust/graph_collection.hpp"

#include "report_render.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <span>
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
  for (const InputSpec& s : inputs) fmt::format_to(std::back_inserter(out), "{}{}", out.empty() ? "" : ", ", to_string(s));
  return out.empty() ? std::string("no inputs") : out;
}

/// The coverage report's failure records: a captured graph as its node count, a shape as text.
constexpr detail::FailureJsonStyle failure_style{
    "nodes", [](const Graph& g) { return json(g.size()); }, [](const Shape& s) { return json(fmt::format("{}", s)); }};

/// A report's failures, by their index in the report, or npos.
constexpr std::size_t npos = static_cast<std::size_t>(-1);

/// The modules of a CollectionReport, each with its failure and its graph found by path. Only
/// a path as long as a failure's or a graph's is looked up.
class ReportModules {
 public:
  ReportModules(const CollectionReport& r, const std::vector<detail::ReportGraph>& graphs)
      : r_(r), failure_(r.modules.size(), npos), graph_(r.modules.size(), npos) {
    std::unordered_map<std::string_view, std::size_t> failure_of, graph_of;
    std::unordered_set<std::size_t> sizes;
    for (std::size_t i = r.failures.size(); i-- > 0;) failure_of[r.failures[i].module] = i;  // the first of a path
    for (std::size_t i = graphs.size(); i-- > 0;) graph_of[graphs[i].module] = i;
    for (const auto& [path, i] : failure_of) sizes.insert(path.size());
    for (const auto& [path, i] : graph_of) sizes.insert(path.size());
    for (std::size_t m = 0; m < r.modules.size(); ++m) {
      const std::string& path = r.modules[m].path;
      if (!sizes.contains(path.size())) continue;
      if (auto it = failure_of.find(path); it != failure_of.end()) failure_[m] = it->second;
      if (auto it = graph_of.find(path); it != graph_of.end()) graph_[m] = it->second;
    }
  }
  [[nodiscard]] std::size_t size() const noexcept { return r_.modules.size(); }
  [[nodiscard]] std::string_view type(std::size_t i) const noexcept { return r_.modules[i].type; }
  [[nodiscard]] ModuleStatus status(std::size_t i) const noexcept { return r_.modules[i].status; }
  [[nodiscard]] std::span<const CollectionReport::Child> children(std::size_t i) const noexcept { return r_.modules[i].children; }
  [[nodiscard]] std::string path(std::size_t i) const { return r_.modules[i].path; }
  [[nodiscard]] std::size_t failure(std::size_t i) const noexcept { return failure_[i]; }
  [[nodiscard]] std::size_t graph(std::size_t i) const noexcept { return graph_[i]; }

 private:
  const CollectionReport& r_;
  std::vector<std::size_t> failure_, graph_;
};

/// The modules of a collection's hierarchy, read in place: a path is made only when one is
/// printed (a chain of n modules has paths of O(n^2) characters in all).
class HierarchyModules {
 public:
  HierarchyModules(const GraphCollection& c, const std::vector<const Graph*>& graphs)
      : h_(c.hierarchy()), failure_(h_.size(), npos), graph_(h_.size(), npos) {
    std::unordered_map<const Graph*, std::size_t> graph_of;
    for (std::size_t i = 0; i < graphs.size(); ++i) graph_of.emplace(graphs[i], i);
    for (std::size_t i = 0; i < h_.size(); ++i) {
      const ModuleRecord& r = h_[i];
      if (r.failure != nullptr) failure_[i] = static_cast<std::size_t>(r.failure - c.failures().data());
      if (auto it = graph_of.find(r.graph); r.graph != nullptr && it != graph_of.end()) graph_[i] = it->second;
    }
  }
  [[nodiscard]] std::size_t size() const noexcept { return h_.size(); }
  [[nodiscard]] std::string_view type(std::size_t i) const { return h_[i].type; }
  [[nodiscard]] ModuleStatus status(std::size_t i) const { return h_[i].status; }
  [[nodiscard]] std::span<const ModuleHierarchy::NamedChild> children(std::size_t i) const { return h_.named_children(i); }
  [[nodiscard]] std::string path(std::size_t i) const { return h_.path(i); }
  [[nodiscard]] std::size_t failure(std::size_t i) const noexcept { return failure_[i]; }
  [[nodiscard]] std::size_t graph(std::size_t i) const noexcept { return graph_[i]; }

 private:
  const ModuleHierarchy& h_;
  std::vector<std::size_t> failure_, graph_;
};

/// The report of a model's modules (`Modules`: ReportModules or HierarchyModules), its
/// failures and its graphs.
template <class Modules>
class Renderer {
 public:
  Renderer(std::string_view model, const Modules& modules, const std::vector<CollectionReport::Failure>& failures,
           const std::vector<detail::ReportGraph>& graphs)
      : model_(model), modules_(modules), failures_(failures), graphs_(graphs) {
    for (const detail::ReportGraph& g : graphs) total_nodes_ += g.nodes;
    for (std::size_t i = 0; i < modules.size(); ++i) ++counts_[static_cast<std::size_t>(modules.status(i))];
  }

  std::string text() const {
    std::string out;
    // About what a module's line takes (its indentation is at most 32 levels): one buffer
    // instead of a series of ever larger ones.
    out.reserve(1024 + 64 * modules_.size());
    fmt::format_to(std::back_inserter(out), "coverage of {} ({})\n", model_, modules_.type(0));
    fmt::format_to(std::back_inserter(out), "  modules: {} ({} traced, {} leaf, {} failed, {} unvisited)\n", modules_.size(),
                   count(ModuleStatus::traced), count(ModuleStatus::leaf), count(ModuleStatus::failed),
                   count(ModuleStatus::unvisited));
    fmt::format_to(std::back_inserter(out), "  graphs: {} ({} nodes)\n", graphs_.size(), total_nodes_);

    out += "\nmodule tree\n";
    tree_label(out, "<model>", 0);
    print_subtree(out, 0);

    fmt::format_to(std::back_inserter(out), "\nfailures ({})\n", failures_.size());
    if (failures_.empty()) out += "  none\n";
    for (const CollectionReport::Failure& f : failures_) print_failure(out, f);

    fmt::format_to(std::back_inserter(out), "\ngraphs ({})\n", graphs_.size());
    for (const detail::ReportGraph& g : graphs_) {
      fmt::format_to(std::back_inserter(out), "  {} ({}): {} nodes\n", display_path(g.module), g.type, g.nodes);
    }

    fmt::format_to(std::back_inserter(out), "\nunvisited ({})\n", count(ModuleStatus::unvisited));
    if (count(ModuleStatus::unvisited) == 0) out += "  none\n";
    for (std::size_t i = 0; i < modules_.size(); ++i) {
      if (modules_.status(i) == ModuleStatus::unvisited) {
        fmt::format_to(std::back_inserter(out), "  {} ({})\n", display_path(modules_.path(i)), modules_.type(i));
      }
    }
    return out;
  }

  std::string json_text() const {
    json doc = json::object();
    doc["model"] = model_;
    json graphs = json::array();
    for (const detail::ReportGraph& g : graphs_) {
      graphs.push_back({{"module", g.module}, {"type", g.type}, {"nodes", g.nodes}});
    }
    doc["graphs"] = std::move(graphs);
    json failed = json::array();
    for (const CollectionReport::Failure& f : failures_) failed.push_back(detail::failure_json(f, failure_style));
    doc["failed"] = std::move(failed);
    json unvisited = json::array();
    json modules = json::array();
    for (std::size_t i = 0; i < modules_.size(); ++i) {
      std::string path = modules_.path(i);
      if (modules_.status(i) == ModuleStatus::unvisited) unvisited.push_back(path);
      modules.push_back({{"module", std::move(path)}, {"type", modules_.type(i)}, {"status", to_string(modules_.status(i))}});
    }
    doc["unvisited"] = std::move(unvisited);
    doc["modules"] = std::move(modules);
    doc["totals"] = {{"modules", modules_.size()},
                     {"traced", count(ModuleStatus::traced)},
                     {"leaf", count(ModuleStatus::leaf)},
                     {"failed", count(ModuleStatus::failed)},
                     {"unvisited", count(ModuleStatus::unvisited)},
                     {"graphs", graphs_.size()},
                     {"nodes", total_nodes_}};
    // Messages may hold bytes that are not UTF-8 (an exception's text): replaced, never a throw.
    return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }

 private:
  [[nodiscard]] std::size_t count(ModuleStatus status) const noexcept { return counts_[static_cast<std::size_t>(status)]; }

  /// One line of the module tree: "name (Type)  status", with the failure's location.
  void tree_label(std::string& out, std::string_view name, std::size_t index) const {
    const ModuleStatus status = modules_.status(index);
    fmt::format_to(std::back_inserter(out), "{} ({})  {}", name, modules_.type(index), status);
    if (status == ModuleStatus::failed) {
      if (const std::size_t f = modules_.failure(index); f != npos) {
        const CollectionReport::Failure& failure = failures_[f];
        fmt::format_to(std::back_inserter(out), ": {}{}{}", failure.kind, failure.source.empty() ? "" : " at ",
                       failure.source);
      }
    }
    if (const std::size_t g = modules_.graph(index); g != npos) {
      fmt::format_to(std::back_inserter(out), "  [graph: {} nodes]", graphs_[g].nodes);
    }
    out += '\n';
  }

  /// The subtree under the module at `index`, children indented under it: depth first, in a
  /// loop (a chain of 10,000 modules is 10,000 levels deep). A module registered under a
  /// second name is listed there once, as a reference: it was listed before, at its first path
  /// (the walk visits modules in the hierarchy's order), which the check reads by index
  /// instead of comparing paths. Past `max_indent` levels, lines are indented no further and
  /// say their depth ("[40] "): a line stays short however deep the model is.
  void print_subtree(std::string& out, std::size_t index) const {
    constexpr std::size_t max_indent = 32;
    struct Level {
      std::size_t module;
      std::size_t next_child = 0;
      std::size_t indent_size;  // of `prefix` for its children
    };
    std::string prefix;
    std::vector<char> listed(modules_.size(), 0);
    if (index < listed.size()) listed[index] = 1;
    std::vector<Level> stack{{index, 0, prefix.size()}};
    while (!stack.empty()) {
      Level& level = stack.back();
      const auto children = modules_.children(level.module);
      if (level.next_child == children.size()) {
        stack.pop_back();
        continue;
      }
      const auto& child = children[level.next_child++];
      const bool last = level.next_child == children.size();
      prefix.resize(level.indent_size);
      const std::size_t depth = stack.size();
      if (depth > max_indent) fmt::format_to(std::back_inserter(out), "{}[{}] {}", prefix, depth, last ? "└── " : "├── ");
      else fmt::format_to(std::back_inserter(out), "{}{}", prefix, last ? "└── " : "├── ");
      if (child.index >= modules_.size()) {
        fmt::format_to(std::back_inserter(out), "{} (?)  not in the report\n", child.name);
        continue;
      }
      if (listed[child.index] != 0) {
        fmt::format_to(std::back_inserter(out), "{} ({})  the module at '{}'\n", child.name, modules_.type(child.index),
                       modules_.path(child.index));
        continue;
      }
      listed[child.index] = 1;
      tree_label(out, child.name, child.index);
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
    if (f.result_by_execution) out += "    its result in its caller's graph: shape by execution (it was run on inputs of its call's shapes)\n";
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

  std::string_view model_;
  const Modules& modules_;
  const std::vector<CollectionReport::Failure>& failures_;
  const std::vector<detail::ReportGraph>& graphs_;
  std::size_t total_nodes_ = 0;
  std::size_t counts_[4] = {};  // per ModuleStatus
};

template <class Modules>
std::string render(const Renderer<Modules>& r, ReportFormat format, std::source_location where) {
  switch (format) {
    case ReportFormat::text: return r.text();
    case ReportFormat::json: return r.json_text();
  }
  throw_invalid_argument(where, "coverage_report was given an unknown format ({}): use ReportFormat::text or json",
                         static_cast<int>(format));
}

}  // namespace

std::string coverage_report(const CollectionReport& report, ReportFormat format, std::source_location where) {
  if (report.modules.empty()) {
    throw_invalid_argument(where, "coverage_report was given a CollectionReport without modules: make it with "
                                  "make_report or report_from_json");
  }
  std::vector<detail::ReportGraph> graphs;
  graphs.reserve(report.graphs.size());
  for (const CollectionReport::GraphEntry& g : report.graphs) graphs.push_back({g.module, g.type, g.graph.size()});
  const ReportModules modules(report, graphs);
  return render(Renderer(report.model, modules, report.failures, graphs), format, where);
}

std::string coverage_report(const GraphCollection& collection, std::string_view model_name, ReportFormat format,
                            std::source_location where) {
  if (collection.size() == 0 || collection.hierarchy().empty()) {
    throw_invalid_argument(where, "coverage_report was given a GraphCollection that holds no trace: call "
                                  "recursive_trace first");
  }
  // Printed from the collection in place: no copies of its graphs, and no paths but those
  // printed.
  const std::vector<CollectionReport::Failure> failures = detail::describe_failures(collection);
  std::vector<detail::ReportGraph> graphs;
  std::vector<const Graph*> graph_of;
  graphs.reserve(collection.size());
  graph_of.reserve(collection.size());
  for (const GraphCollection::Entry& e : collection) {
    graphs.push_back({e.path, e.module->type_name(), e.graph.size()});
    graph_of.push_back(&e.graph);
  }
  const HierarchyModules modules(collection, graph_of);
  return render(Renderer(model_name, modules, failures, graphs), format, where);
}

}  // namespace symtrace
