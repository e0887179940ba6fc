// The coverage report of a GraphCollection, as text and as JSON.
#include "symtrace/robust/coverage_report.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/robust/graph_collection.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <stdexcept>

namespace symtrace {

namespace {

using json = nlohmann::ordered_json;

std::string display_path(std::string_view path) { return path.empty() ? std::string("<model>") : std::string(path); }

std::string source_of(const ModuleFailure& f) {
  return f.where.line() == 0 ? std::string() : fmt::format("{}:{}", f.where.file_name(), f.where.line());
}

/// "float32[1, 8, 16, 16], int64[4]".
std::string inputs_text(const std::vector<InputSpec>& inputs) {
  std::string out;
  for (const InputSpec& s : inputs) fmt::format_to(std::back_inserter(out), "{}{}{}", out.empty() ? "" : ", ", s.dtype, s.shape);
  return out.empty() ? std::string("no inputs") : out;
}

/// A capture by execution as JSON: null when none was attempted.
json by_execution_json(const ExecutionCapture* x) {
  if (x == nullptr) return nullptr;
  json inputs = json::array();
  for (const InputSpec& s : x->inputs) inputs.push_back({{"dtype", fmt::format("{}", s.dtype)}, {"shape", fmt::format("{}", s.shape)}});
  json warnings = json::array();
  for (const TraceWarning& w : x->warnings) {
    warnings.push_back({{"kind", to_string(w.kind)},
                        {"source", fmt::format("{}:{}", w.where.file_name(), w.where.line())},
                        {"module", w.module_path},
                        {"count", w.count},
                        {"message", w.message}});
  }
  return {{"nodes", x->graph ? json(x->graph->size()) : json(nullptr)},
          {"inputs", std::move(inputs)},
          {"warnings", std::move(warnings)},
          {"error", x->error.empty() ? json(nullptr) : json(x->error)}};
}

std::size_t total_nodes(const GraphCollection& c) {
  std::size_t nodes = 0;
  for (const GraphCollection::Entry& e : c) nodes += e.graph.size();
  return nodes;
}

/// One line of the module tree: "name (Type)  status", with the failure's location.
std::string tree_label(std::string_view name, const ModuleRecord& r) {
  std::string line = fmt::format("{} ({})  {}", name, r.type, r.status);
  if (r.failure != nullptr) {
    const std::string source = source_of(*r.failure);
    fmt::format_to(std::back_inserter(line), ": {}{}{}", r.failure->kind, source.empty() ? "" : " at ", source);
  }
  if (r.graph != nullptr) fmt::format_to(std::back_inserter(line), "  [graph: {} nodes]", r.graph->size());
  return line;
}

/// The subtree under the module at `index` (its first path `path`), children indented under
/// `prefix`. A module registered under a second name is listed there once, as a reference.
void print_subtree(std::string& out, const ModuleHierarchy& h, std::size_t index, const std::string& prefix) {
  const ModuleRecord& r = h[index];
  const auto& children = r.module->named_children();
  for (std::size_t i = 0; i < children.size(); ++i) {
    const auto& [name, child] = children[i];
    const bool last = i + 1 == children.size();
    const std::size_t c = h.index_of(*child);
    const ModuleRecord& cr = h[c];
    const std::string child_path = r.path.empty() ? name : fmt::format("{}.{}", r.path, name);
    fmt::format_to(std::back_inserter(out), "{}{}", prefix, last ? "└── " : "├── ");
    if (cr.path != child_path) {
      fmt::format_to(std::back_inserter(out), "{} ({})  the module at '{}'\n", name, cr.type, cr.path);
      continue;
    }
    fmt::format_to(std::back_inserter(out), "{}\n", tree_label(name, cr));
    print_subtree(out, h, c, prefix + (last ? "    " : "│   "));
  }
}

std::string text_report(const GraphCollection& c, std::string_view model_name) {
  const ModuleHierarchy& h = c.hierarchy();
  std::string out;
  fmt::format_to(std::back_inserter(out), "coverage of {} ({})\n", model_name, h[0].type);
  fmt::format_to(std::back_inserter(out), "  modules: {} ({} traced, {} leaf, {} failed, {} unvisited)\n", h.size(),
                 h.count(ModuleStatus::traced), h.count(ModuleStatus::leaf), h.count(ModuleStatus::failed),
                 h.count(ModuleStatus::unvisited));
  fmt::format_to(std::back_inserter(out), "  graphs: {} ({} nodes)\n", c.size(), total_nodes(c));

  out += "\nmodule tree\n";
  fmt::format_to(std::back_inserter(out), "{}\n", tree_label("<model>", h[0]));
  print_subtree(out, h, 0, "");

  fmt::format_to(std::back_inserter(out), "\nfailures ({})\n", c.failures().size());
  if (c.failures().empty()) out += "  none\n";
  for (const ModuleFailure& f : c.failures()) {
    const std::string source = source_of(f);
    fmt::format_to(std::back_inserter(out), "  {} ({}){}{}\n", display_path(f.module), f.type, source.empty() ? "" : " at ",
                   source);
    // The message of a TraceError starts with the location printed above: not twice.
    std::string_view message = f.message;
    if (!source.empty() && message.starts_with(source + ": ")) message.remove_prefix(source.size() + 2);
    fmt::format_to(std::back_inserter(out), "    {}: {}\n", f.kind, message);
    if (!f.op.empty()) fmt::format_to(std::back_inserter(out), "    the op that failed: {}\n", f.op);
    if (const ExecutionCapture* x = f.by_execution.get()) {
      if (!x->graph) {
        fmt::format_to(std::back_inserter(out), "    not captured by execution: {}\n", x->error);
        continue;
      }
      fmt::format_to(std::back_inserter(out), "    captured by execution on {}: {} nodes, specialised ({} {})\n",
                     inputs_text(x->inputs), x->graph->size(), x->warnings.size(),
                     x->warnings.size() == 1 ? "place reads tensor data" : "places read tensor data");
      for (const TraceWarning& w : x->warnings) {
        fmt::format_to(std::back_inserter(out), "      {}:{} {} ({} {})\n", w.where.file_name(),
                       w.where.line(), to_string(w.kind), w.count, w.count == 1 ? "time" : "times");
      }
    }
  }

  fmt::format_to(std::back_inserter(out), "\ngraphs ({})\n", c.size());
  for (const GraphCollection::Entry& e : c) {
    fmt::format_to(std::back_inserter(out), "  {} ({}): {} nodes\n", display_path(e.path), e.module->type_name(),
                   e.graph.size());
  }

  fmt::format_to(std::back_inserter(out), "\nunvisited ({})\n", h.count(ModuleStatus::unvisited));
  if (h.count(ModuleStatus::unvisited) == 0) out += "  none\n";
  for (const ModuleRecord& r : h) {
    if (r.status == ModuleStatus::unvisited) fmt::format_to(std::back_inserter(out), "  {} ({})\n", display_path(r.path), r.type);
  }
  return out;
}

std::string json_report(const GraphCollection& c, std::string_view model_name) {
  const ModuleHierarchy& h = c.hierarchy();
  json doc = json::object();
  doc["model"] = model_name;
  json graphs = json::array();
  for (const GraphCollection::Entry& e : c) {
    graphs.push_back({{"module", e.path}, {"type", e.module->type_name()}, {"nodes", e.graph.size()}});
  }
  doc["graphs"] = std::move(graphs);
  json failed = json::array();
  for (const ModuleFailure& f : c.failures()) {
    const std::string source = source_of(f);
    failed.push_back({{"module", f.module},
                      {"type", f.type},
                      {"kind", f.kind},
                      {"message", f.message},
                      {"source", source.empty() ? json(nullptr) : json(source)},
                      {"op", f.op.empty() ? json(nullptr) : json(f.op)},
                      {"by_execution", by_execution_json(f.by_execution.get())}});
  }
  doc["failed"] = std::move(failed);
  json unvisited = json::array();
  json modules = json::array();
  for (const ModuleRecord& r : h) {
    if (r.status == ModuleStatus::unvisited) unvisited.push_back(r.path);
    modules.push_back({{"module", r.path}, {"type", r.type}, {"status", to_string(r.status)}});
  }
  doc["unvisited"] = std::move(unvisited);
  doc["modules"] = std::move(modules);
  doc["totals"] = {{"modules", h.size()},
                   {"traced", h.count(ModuleStatus::traced)},
                   {"leaf", h.count(ModuleStatus::leaf)},
                   {"failed", h.count(ModuleStatus::failed)},
                   {"unvisited", h.count(ModuleStatus::unvisited)},
                   {"graphs", c.size()},
                   {"nodes", total_nodes(c)}};
  // Messages may hold bytes that are not UTF-8 (an exception's text): replaced, never a throw.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string coverage_report(const GraphCollection& collection, std::string_view model_name, ReportFormat format,
                            std::source_location where) {
  if (collection.size() == 0 || collection.hierarchy().empty()) {
    throw_invalid_argument(where, "coverage_report was given a GraphCollection that holds no trace: call "
                                  "recursive_trace first");
  }
  switch (format) {
    case ReportFormat::text: return text_report(collection, model_name);
    case ReportFormat::json: return json_report(collection, model_name);
  }
  throw_invalid_argument(where, "coverage_report was given an unknown format ({}): use ReportFormat::text or json",
                         static_cast<int>(format));
}

}  // namespace symtrace
