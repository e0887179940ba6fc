// make_report: a GraphCollection's results copied into plain data, locations as text; and the
// one writer of its failure records as JSON (detail/failure_json.hpp).
#include "symtrace/robust/collection_report.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/robust/detail/failure_json.hpp"
#include "symtrace/robust/graph_collection.hpp"

#include "report_render.hpp"

#include <fmt/format.h>

namespace symtrace {

namespace {

std::string source_text(std::source_location where) {
  return where.line() == 0 ? std::string() : fmt::format("{}:{}", where.file_name(), where.line());
}

CollectionReport::ByExecution by_execution_of(const ExecutionCapture& x) {
  CollectionReport::ByExecution b;
  if (x.graph) b.graph = *x.graph;
  b.inputs = x.inputs;
  for (const TraceWarning& w : x.warnings) {
    b.warnings.push_back(CollectionReport::Warning{std::string(to_string(w.kind)),
                                                   fmt::format("{}:{}", w.where.file_name(), w.where.line()), w.module_path,
                                                   w.count, w.message});
  }
  b.error = x.error;
  return b;
}

}  // namespace

std::size_t CollectionReport::count(ModuleStatus status) const noexcept {
  std::size_t n = 0;
  for (const ModuleEntry& m : modules) n += m.status == status ? 1 : 0;
  return n;
}

std::size_t CollectionReport::total_nodes() const noexcept {
  std::size_t n = 0;
  for (const GraphEntry& g : graphs) n += g.graph.size();
  return n;
}

namespace detail {

namespace {

using Json = nlohmann::ordered_json;

// A constant part of an input: None, a bool, a number, a string, or a list of them (anything
// else as its text).
Json value_json(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::none: return nullptr;
    case Value::Kind::boolean: return v.to_bool();
    case Value::Kind::integer: return v.to_int();
    case Value::Kind::floating: return v.to_double();
    case Value::Kind::string: return v.to_string_ref();
    case Value::Kind::list: {
      Json items = Json::array();
      for (const Value& e : v.to_list()) items.push_back(value_json(e));
      return items;
    }
    default: return to_string(v);
  }
}

}  // namespace

nlohmann::ordered_json input_spec_json(const InputSpec& s, const FailureJsonStyle& style) {
  if (s.is_constant) return Json{{"value", value_json(s.value)}};
  if (s.is_list) {
    Json items = Json::array();
    for (const InputSpec& e : s.elements) items.push_back(input_spec_json(e, style));
    return Json{{"list", std::move(items)}};
  }
  if (s.is_dict) {
    Json items = Json::object();
    for (std::size_t i = 0; i < s.elements.size(); ++i) items[s.keys[i]] = input_spec_json(s.elements[i], style);
    return Json{{"dict", std::move(items)}};
  }
  return Json{{"dtype", std::string(name(s.dtype))}, {"shape", style.shape(s.shape)}};
}

nlohmann::ordered_json failure_json(const CollectionReport::Failure& f, const FailureJsonStyle& style) {
  using Json = nlohmann::ordered_json;
  auto null_if_empty = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
  Json by_execution = nullptr;
  if (const std::optional<CollectionReport::ByExecution>& x = f.by_execution) {
    Json inputs = Json::array();
    for (const InputSpec& s : x->inputs) inputs.push_back(input_spec_json(s, style));
    Json warnings = Json::array();
    for (const CollectionReport::Warning& w : x->warnings) {
      warnings.push_back(Json{{"kind", w.kind}, {"source", w.source}, {"module", w.module}, {"count", w.count}, {"message", w.message}});
    }
    by_execution = Json{{style.graph_key, x->graph ? style.graph(*x->graph) : Json(nullptr)},
                        {"inputs", std::move(inputs)},
                        {"warnings", std::move(warnings)},
                        {"error", null_if_empty(x->error)}};
  }
  return Json{{"module", f.module},
              {"type", f.type},
              {"kind", f.kind},
              {"message", f.message},
              {"source", null_if_empty(f.source)},
              {"op", null_if_empty(f.op)},
              {"result_by_execution", f.result_by_execution},
              {"by_execution", std::move(by_execution)}};
}

std::vector<CollectionReport::Failure> describe_failures(const GraphCollection& collection) {
  std::vector<CollectionReport::Failure> out;
  out.reserve(collection.failures().size());
  for (const ModuleFailure& f : collection.failures()) {
    CollectionReport::Failure r{f.module, f.type, f.kind, f.message, source_text(f.where), f.op, f.result_by_execution,
                                std::nullopt};
    if (f.by_execution) r.by_execution = by_execution_of(*f.by_execution);
    out.push_back(std::move(r));
  }
  return out;
}

CollectionReport describe_collection(const GraphCollection& collection, std::string_view model_name, bool copy_graphs,
                                     std::source_location where) {
  const ModuleHierarchy& h = collection.hierarchy();
  if (collection.size() == 0 || h.empty()) {
    throw_invalid_argument(where, "make_report was given a GraphCollection that holds no trace: call "
                                  "recursive_trace first");
  }
  CollectionReport r;
  r.model = std::string(model_name);
  r.modules.reserve(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    const ModuleRecord& m = h[i];
    CollectionReport::ModuleEntry e{{}, std::string(m.type), m.status, {}};
    // The children as traced, not as the model holds them now (Note [Records outlive the
    // model's changes] in graph_collection.cpp).
    for (const ModuleHierarchy::NamedChild& child : h.named_children(i)) e.children.push_back({child.name, child.index});
    r.modules.push_back(std::move(e));
  }
  h.for_each_path([&](std::size_t i, std::string_view path) { r.modules[i].path = path; });
  r.failures = describe_failures(collection);
  if (copy_graphs) {
    for (const GraphCollection::Entry& e : collection) r.graphs.push_back({e.path, e.module->type_name(), e.graph});
  }
  return r;
}

}  // namespace detail

CollectionReport make_report(const GraphCollection& collection, std::string_view model_name, std::source_location where) {
  return detail::describe_collection(collection, model_name, true, where);
}

}  // namespace symtrace
