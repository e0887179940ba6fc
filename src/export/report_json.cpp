// The report document: a CollectionReport written with its graphs as graph documents, and
// read back from a document that may be anything (Note [Reading hostile documents] in
// graph_json.cpp). Beyond the field checks, the reader keeps the module tree printable: paths
// are unique, a module names each child once, and paths are at most 65,536 components deep (a
// chain of modules 10,000 deep is a model; far deeper is not), so the coverage report of any
// report it returns prints each module fully at most once, in a loop.
#include "symtrace/export/report_json.hpp"

#include "json_document.hpp"
#include "symtrace/robust/detail/failure_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace symtrace {

namespace {

using detail::document_error;
using detail::document_field;
using detail::Json;

constexpr std::string_view report_format_name = "symtrace.report";
constexpr std::size_t max_module_depth = 65536;

/// The report document's failure records: a captured graph and a shape as their documents.
const detail::FailureJsonStyle failure_style{"graph", detail::write_graph_document, detail::write_shape_document};

Json write_report(const CollectionReport& r) {
  Json modules = Json::array();
  for (const CollectionReport::ModuleEntry& m : r.modules) {
    Json children = Json::array();
    for (const CollectionReport::Child& c : m.children) children.push_back(Json{{"name", c.name}, {"index", c.index}});
    // clang-format off
    modules.push_back(Json{{"module", m.path}, {"type", m.type}, {"status", std::string(to_string(m.status))},
                           {"children", std::move(children)}});
    // clang-format on
  }
  Json failed = Json::array();
  for (const CollectionReport::Failure& f : r.failures) failed.push_back(detail::failure_json(f, failure_style));
  Json graphs = Json::array();
  for (const CollectionReport::GraphEntry& g : r.graphs) {
    graphs.push_back(Json{{"module", g.module}, {"type", g.type}, {"graph", detail::write_graph_document(g.graph)}});
  }
  // clang-format off
  return Json{{"format", report_format_name}, {"version", report_json_version}, {"model", r.model},
              {"modules", std::move(modules)}, {"failed", std::move(failed)}, {"graphs", std::move(graphs)}};
  // clang-format on
}

// ---- reading ------------------------------------------------------------------------------

std::string string_field(const Json& j, const std::string& at, const char* key) {
  return document_field(j, at, key, Json::value_t::string).get<std::string>();
}

/// A string, or "" for null.
std::string optional_string(const Json& j, const std::string& at, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) document_error(at, "has no \"{}\"", key);
  if (it->is_null()) return {};
  if (!it->is_string()) document_error(at + "." + key, "is {}, not a string or null", it->type_name());
  if (it->get<std::string>().empty()) document_error(at + "." + key, "is empty; write null for none");
  return it->get<std::string>();
}

/// A count: an integer in [min, max].
std::size_t count_field(const Json& j, const std::string& at, const char* key, std::size_t min, std::size_t max) {
  const Json& v = document_field(j, at, key, Json::value_t::number_integer);
  if (detail::too_large_for_int64(v) || v.get<std::int64_t>() < static_cast<std::int64_t>(min) ||
      v.get<std::uint64_t>() > max) {
    document_error(at + "." + key, "is {}; it must be an integer from {} to {}", v.dump(), min, max);
  }
  return static_cast<std::size_t>(v.get<std::uint64_t>());
}

const Json& object_at(const Json& array, std::size_t i, const std::string& at) {
  if (!array[i].is_object()) document_error(at, "is {}, not an object", array[i].type_name());
  return array[i];
}

std::optional<ModuleStatus> parse_status(std::string_view text) {
  for (ModuleStatus s : {ModuleStatus::traced, ModuleStatus::leaf, ModuleStatus::failed, ModuleStatus::unvisited}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

std::vector<CollectionReport::ModuleEntry> read_modules(const Json& modules) {
  if (modules.empty()) document_error("document.modules", "is empty; the model itself is modules[0]");
  std::vector<CollectionReport::ModuleEntry> out;
  out.reserve(modules.size());
  std::unordered_set<std::string> paths;
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const std::string at = fmt::format("document.modules[{}]", i);
    const Json& j = object_at(modules, i, at);
    CollectionReport::ModuleEntry m;
    m.path = string_field(j, at, "module");
    if (i == 0 && !m.path.empty()) document_error(at + ".module", "is '{}'; modules[0] is the model, whose path is \"\"", m.path);
    if (i > 0 && m.path.empty()) document_error(at + ".module", "is empty; only the model (modules[0]) has the path \"\"");
    if (!paths.insert(m.path).second) document_error(at + ".module", "'{}' is the path of an earlier module; paths are unique", m.path);
    if (static_cast<std::size_t>(std::count(m.path.begin(), m.path.end(), '.')) >= max_module_depth) {
      document_error(at + ".module", "nests modules deeper than {} levels", max_module_depth);
    }
    m.type = string_field(j, at, "type");
    const std::string status = string_field(j, at, "status");
    const std::optional<ModuleStatus> s = parse_status(status);
    if (!s) document_error(at + ".status", "'{}' is not a status; use traced, leaf, failed or unvisited", status);
    m.status = *s;
    const Json& children = document_field(j, at, "children", Json::value_t::array);
    std::unordered_set<std::string> names;
    for (std::size_t k = 0; k < children.size(); ++k) {
      const std::string cat = fmt::format("{}.children[{}]", at, k);
      const Json& c = object_at(children, k, cat);
      CollectionReport::Child child{string_field(c, cat, "name"), count_field(c, cat, "index", 0, modules.size() - 1)};
      if (child.name.empty()) document_error(cat + ".name", "is empty; a child has a name");
      if (!names.insert(child.name).second) document_error(cat + ".name", "'{}' names an earlier child too; names are unique", child.name);
      if (child.index == 0 || child.index == i) {
        document_error(cat + ".index", "is {}, which is {}; a child is another module", child.index, child.index == 0 ? "the model" : "the module itself");
      }
      m.children.push_back(std::move(child));
    }
    out.push_back(std::move(m));
  }
  return out;
}

// A constant part of an input (input_spec_json's "value"), nested at most `depth` levels more.
Value read_constant(const Json& j, const std::string& at, int depth = 16) {
  if (depth == 0) document_error(at, "nests arrays too deeply");
  switch (j.type()) {
    case Json::value_t::null: return Value();
    case Json::value_t::boolean: return j.get<bool>();
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      if (detail::too_large_for_int64(j)) document_error(at, "is {}, which is not an int64", j.dump());
      return j.get<std::int64_t>();
    case Json::value_t::number_float: return j.get<double>();
    case Json::value_t::string: return j.get<std::string>();
    case Json::value_t::array: {
      ValueList items;
      for (std::size_t i = 0; i < j.size(); ++i) items.push_back(read_constant(j[i], fmt::format("{}[{}]", at, i), depth - 1));
      return items;
    }
    default: document_error(at, "is {}; a constant is null, a bool, a number, a string or an array of them", j.type_name());
  }
}

// An input's spec (detail::input_spec_json), nested at most `depth` levels more; a constant
// only as a part of a list or dict.
InputSpec read_input_spec(const Json& j, const std::string& at, int depth = 16, bool part = false) {
  if (!j.is_object()) document_error(at, "is {}, not an object", j.type_name());
  if (depth == 0) document_error(at, "nests lists and dicts too deeply");
  const int kinds = static_cast<int>(j.contains("value")) + static_cast<int>(j.contains("list")) +
                    static_cast<int>(j.contains("dict")) + static_cast<int>(j.contains("shape") || j.contains("dtype"));
  if (kinds > 1) document_error(at, "mixes the keys of two kinds of spec; a spec has \"shape\" and \"dtype\", \"list\", \"dict\" or \"value\"");
  if (j.contains("value")) {
    if (!part) document_error(at, "is a constant, which only a part of a list or dict input is");
    return InputSpec::constant(read_constant(j["value"], at + ".value"));
  }
  if (j.contains("list")) {
    const Json& items = document_field(j, at, "list", Json::value_t::array);
    std::vector<InputSpec> elements;
    for (std::size_t i = 0; i < items.size(); ++i)
      elements.push_back(read_input_spec(items[i], fmt::format("{}.list[{}]", at, i), depth - 1, true));
    return InputSpec::list(std::move(elements));
  }
  if (j.contains("dict")) {
    const Json& items = document_field(j, at, "dict", Json::value_t::object);
    std::vector<std::pair<std::string, InputSpec>> elements;
    for (const auto& [key, item] : items.items())
      elements.emplace_back(key, read_input_spec(item, fmt::format("{}.dict.{}", at, key), depth - 1, true));
    return InputSpec::dict(std::move(elements));
  }
  if (!j.contains("shape")) document_error(at, "has no \"shape\" (nor \"list\", \"dict\" or \"value\")");
  return InputSpec(detail::read_shape_document(j["shape"], at + ".shape"),
                   detail::read_dtype_document(j.contains("dtype") ? j["dtype"] : Json(), at + ".dtype"));
}

std::optional<CollectionReport::ByExecution> read_by_execution(const Json& j, const std::string& at) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_object()) document_error(at, "is {}, not an object or null", j.type_name());
  CollectionReport::ByExecution x;
  if (!j.contains("graph")) document_error(at, "has no \"graph\"");
  if (!j["graph"].is_null()) x.graph = detail::read_graph_document(j["graph"], at + ".graph", 1);
  const Json& inputs = document_field(j, at, "inputs", Json::value_t::array);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string iat = fmt::format("{}.inputs[{}]", at, i);
    x.inputs.push_back(read_input_spec(object_at(inputs, i, iat), iat));
  }
  const Json& warnings = document_field(j, at, "warnings", Json::value_t::array);
  for (std::size_t i = 0; i < warnings.size(); ++i) {
    const std::string wat = fmt::format("{}.warnings[{}]", at, i);
    const Json& w = object_at(warnings, i, wat);
    x.warnings.push_back(CollectionReport::Warning{string_field(w, wat, "kind"), string_field(w, wat, "source"),
                                                   string_field(w, wat, "module"),
                                                   count_field(w, wat, "count", 1, std::numeric_limits<std::uint32_t>::max()),
                                                   string_field(w, wat, "message")});
    if (x.warnings.back().kind != "value_read" && x.warnings.back().kind != "branch") {
      document_error(wat + ".kind", "'{}' is not a warning kind; use value_read or branch", x.warnings.back().kind);
    }
  }
  x.error = optional_string(j, at, "error");
  if (x.graph.has_value() == !x.error.empty()) {
    document_error(at, "has {} a graph {} an error; a capture has one of them", x.graph ? "both" : "neither",
                   x.graph ? "and" : "nor");
  }
  return x;
}

CollectionReport read_report(const Json& doc) {
  const std::string at = "document";
  if (!doc.is_object()) document_error(at, "is {}, not an object", doc.type_name());
  const std::string format = string_field(doc, at, "format");
  if (format != report_format_name) document_error("document.format", "is '{}'; a report document has \"format\": \"{}\"", format, report_format_name);
  const Json& version = document_field(doc, at, "version", Json::value_t::number_integer);
  if (detail::too_large_for_int64(version) || version.get<std::int64_t>() != report_json_version) {
    document_error("document.version", "is {}; this build reads version {}", version.dump(), report_json_version);
  }
  CollectionReport r;
  r.model = string_field(doc, at, "model");
  r.modules = read_modules(document_field(doc, at, "modules", Json::value_t::array));
  std::unordered_map<std::string_view, std::size_t> module_of;
  for (std::size_t i = 0; i < r.modules.size(); ++i) module_of.emplace(r.modules[i].path, i);

  const Json& failed = document_field(doc, at, "failed", Json::value_t::array);
  std::unordered_set<std::string> failed_paths;
  for (std::size_t i = 0; i < failed.size(); ++i) {
    const std::string fat = fmt::format("document.failed[{}]", i);
    const Json& f = object_at(failed, i, fat);
    CollectionReport::Failure out{string_field(f, fat, "module"), string_field(f, fat, "type"), string_field(f, fat, "kind"),
                                  string_field(f, fat, "message"), optional_string(f, fat, "source"),
                                  optional_string(f, fat, "op"), false, std::nullopt};
    if (f.contains("result_by_execution")) {
      if (!f["result_by_execution"].is_boolean()) document_error(fat + ".result_by_execution", "is not a bool");
      out.result_by_execution = f["result_by_execution"].get<bool>();
    }
    if (!failed_paths.insert(out.module).second) document_error(fat + ".module", "'{}' has an earlier failure record; a module fails once", out.module);
    if (!f.contains("by_execution")) document_error(fat, "has no \"by_execution\"");
    out.by_execution = read_by_execution(f["by_execution"], fat + ".by_execution");
    r.failures.push_back(std::move(out));
  }

  const Json& graphs = document_field(doc, at, "graphs", Json::value_t::array);
  std::unordered_set<std::string> traced;
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const std::string gat = fmt::format("document.graphs[{}]", i);
    const Json& g = object_at(graphs, i, gat);
    std::string module = string_field(g, gat, "module");
    if (!traced.insert(module).second) document_error(gat + ".module", "'{}' has an earlier graph; a module is traced as a root once", module);
    std::string type = string_field(g, gat, "type");
    if (!g.contains("graph")) document_error(gat, "has no \"graph\"");
    r.graphs.push_back(CollectionReport::GraphEntry{std::move(module), std::move(type), detail::read_graph_document(g["graph"], gat + ".graph")});
  }
  return r;
}

}  // namespace

std::string report_to_json(const CollectionReport& report, int indent) {
  // Messages may hold bytes that are not UTF-8 (an exception's text): replaced, never a throw.
  return write_report(report).dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

CollectionReport report_from_json(std::string_view document) {
  const Json doc = detail::parse_document(document, "report_from_json");
  try {
    return read_report(doc);
  } catch (const detail::DocumentError& e) {
    throw std::invalid_argument(fmt::format("report_from_json: {}", e.what()));
  } catch (const Json::exception& e) {  // every access is checked first; this is the last line of defence
    throw std::invalid_argument(fmt::format("report_from_json: the document cannot be read: {}", e.what()));
  }
}

}  // namespace symtrace
