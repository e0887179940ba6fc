// The graph JSON document: writing, and reading a document that may be anything.
//
// Note [Reading hostile documents]: every field is checked for presence and type before use,
// with the path of the value in the message; numbers that size something are bounded before
// anything is allocated for them; nesting is bounded (arguments and subgraphs) so that no
// input recurses deeply; the graph is built aside and linted, and handed out only whole.
#include "symtrace/export/graph_json.hpp"

#include "json_document.hpp"

#include "symtrace/core/detail/source_location.hpp"
#include "symtrace/core/dtype.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/graph/lint.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <source_location>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace symtrace {

namespace {

using detail::Json;

constexpr std::string_view format_name = "symtrace.graph";
constexpr int max_depth = 64;                            // argument lists and subgraphs
constexpr std::int64_t max_constant_elements = 1 << 28;  // 1 GiB of float32

// ---- writing ------------------------------------------------------------------------------

Json write_double(double d) {
  if (std::isnan(d)) return Json{{"float", "nan"}};
  if (std::isinf(d)) return Json{{"float", d > 0 ? "inf" : "-inf"}};
  return d;
}

Json write_argument(const Graph& graph, const Argument& a) {
  return boost::variant2::visit(
      overloaded{
          [](boost::variant2::monostate) -> Json { return nullptr; },
          [](bool b) -> Json { return b; },
          [](std::int64_t i) -> Json { return i; },
          [](double d) -> Json { return write_double(d); },
          [](const detail::Boxed<std::string>& s) -> Json { return s.get(); },
          [](DType t) -> Json { return Json{{"dtype", std::string(name(t))}}; },
          [&](NodeId id) -> Json { return Json{{"node", graph.node(id).name()}}; },
          [&](const detail::Boxed<ArgumentList>& list) -> Json {
            Json items = Json::array();
            for (const Argument& item : list.get()) items.push_back(write_argument(graph, item));
            return items;
          },
      },
      a.value);
}

// A size is an integer, an expression over named dims as a string ("H//4"), or null.
Json write_shape(const Shape& shape) {
  if (!shape.is_rank_known()) return nullptr;
  Json dims = Json::array();
  for (Dim d : shape) dims.push_back(d.is_known() ? Json(d.value()) : d.is_symbolic() ? Json(to_string(d))
                                                                                      : Json(nullptr));
  return dims;
}

// The named dims a graph's shapes and size guards use, with their ranges:
// {"N": [1, null], "H": [32, 1024]} (null: no bound).
Json write_dims(const Graph& graph) {
  std::vector<std::pair<std::string, SymRange>> all;
  const auto add = [&](SymExpr e) {
    for (auto& r : e.symbol_ranges()) all.push_back(std::move(r));
  };
  for (const Node& n : graph.nodes()) {
    if (const TensorMeta* tm = n.tensor_meta())
      for (Dim d : tm->shape)
        if (d.is_symbolic()) add(*d.expr());
  }
  for (const Graph::SizeGuard& g : graph.size_guards()) {
    add(g.fact.lhs);
    add(g.fact.rhs);
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Json dims = Json::object();
  for (const auto& [name, range] : all) {
    const Json bounds = Json::array({range.lo == -SymRange::unbounded ? Json(nullptr) : Json(range.lo),
                                     range.hi == SymRange::unbounded ? Json(nullptr) : Json(range.hi)});
    if (dims.contains(name) && dims[name] != bounds)
      throw std::invalid_argument(fmt::format("graph_to_json: the graph names two dims '{}', with ranges {} and {}; "
                                              "give one dim one name",
                                              name, dims[name].dump(), bounds.dump()));
    dims[name] = bounds;
  }
  return dims;
}

Json write_constant(const std::string& name, const Tensor& t) {
  Json data = Json::array();
  switch (t.dtype()) {
    case DType::float32:
      for (double v : t.to_vector<double>()) data.push_back(write_double(v));
      break;
    case DType::int64:
      for (std::int64_t v : t.to_vector<std::int64_t>()) data.push_back(v);
      break;
    case DType::bool_:
      for (double v : t.to_vector<double>()) data.push_back(v != 0);
      break;
    default:
      throw std::invalid_argument(fmt::format("graph JSON cannot store the constant '{}': it is a {} tensor, and "
                                              "graph JSON stores float32, int64 and bool constants",
                                              name, t.dtype()));
  }
  // clang-format off
  return Json{{"name", name}, {"dtype", std::string(symtrace::name(t.dtype()))}, {"shape", write_shape(t.shape())},
              {"data", std::move(data)}};
  // clang-format on
}

Json write_graph(const Graph& graph) {
  Json nodes = Json::array();
  for (const Node& n : graph.nodes()) {
    Json args = Json::array();
    for (const Argument& a : n.args()) args.push_back(write_argument(graph, a));
    Json kwargs = Json::object();
    for (const auto& [key, value] : n.kwargs()) kwargs[key] = write_argument(graph, value);
    Json meta = Json::object();
    Json source = nullptr;
    if (n.where().line() != 0) source = fmt::format("{}:{}", n.where().file_name(), n.where().line());
    for (const auto& [key, value] : n.meta()) {
      if (key == "source" && source.is_null() && value.get_if<std::string>() != nullptr) {
        source = *value.get_if<std::string>();  // an imported node's source, written back
        continue;
      }
      meta[key] = write_argument(graph, value);
    }
    const TensorMeta* tm = n.tensor_meta();
    nodes.push_back(Json{{"name", n.name()},
                         {"op", fmt::format("{}", n.op())},
                         {"target", std::string(n.target())},
                         {"args", std::move(args)},
                         {"kwargs", std::move(kwargs)},
                         {"dtype", tm ? Json(std::string(name(tm->dtype))) : Json(nullptr)},
                         {"shape", tm ? write_shape(tm->shape) : Json(nullptr)},
                         {"scope", std::string(n.scope())},
                         {"source", std::move(source)},
                         {"meta", std::move(meta)},
                         {"impure", n.is_impure()}});
  }
  Json guards = Json::array();
  for (const Graph::Guard& g : graph.guards()) guards.push_back(Json{{"input", g.input}, {"value", write_argument(graph, g.value)}});
  Json size_guards = Json::array();
  for (const Graph::SizeGuard& g : graph.size_guards()) {
    size_guards.push_back(Json{{"fact", to_string(g.fact)},
                               {"source", g.where.line() != 0 ? Json(fmt::format("{}:{}", g.where.file_name(), g.where.line()))
                                                              : Json(nullptr)}});
  }
  Json constants = Json::array();
  for (std::size_t i = 0; i < graph.num_constants(); ++i) {
    const std::string name = fmt::format("_tensor_constant{}", i);
    const Tensor* t = graph.find_constant(name);
    if (t == nullptr) throw std::logic_error(fmt::format("graph_to_json: the graph has no constant '{}'", name));
    constants.push_back(write_constant(name, *t));
  }
  Json subgraphs = Json::array();
  for (const auto& [name, sub] : graph.subgraphs()) subgraphs.push_back(Json{{"name", name}, {"graph", write_graph(*sub)}});
  // clang-format off
  return Json{{"format", format_name},         {"version", graph_json_version}, {"dims", write_dims(graph)},
              {"nodes", std::move(nodes)},     {"guards", std::move(guards)},     {"size_guards", std::move(size_guards)},
              {"constants", std::move(constants)}, {"subgraphs", std::move(subgraphs)}};
  // clang-format on
}

// ---- reading ------------------------------------------------------------------------------

/// Reads one document (or a subgraph's) into a graph, with `path` naming where it is.
class Reader {
 public:
  Reader(const std::string& path, int depth) : path_(path), depth_(depth) {}

  Graph read(const Json& doc) {
    if (!doc.is_object()) fail(path_, "the document is {}, not an object", doc.type_name());
    const Json& format = field(doc, path_, "format", Json::value_t::string);
    if (format.get<std::string>() != format_name) {
      fail(path_ + ".format", "is '{}'; a graph document has \"format\": \"{}\"", format.get<std::string>(), format_name);
    }
    const Json& version = field(doc, path_, "version", Json::value_t::number_integer);
    if (too_large(version) || version.get<std::int64_t>() != graph_json_version) {
      fail(path_ + ".version", "is {}; this build reads version {}", version.dump(), graph_json_version);
    }
    Graph graph;
    if (doc.contains("dims")) read_dims(doc["dims"], path_ + ".dims");
    read_constants(graph, array_field(doc, path_, "constants"));
    read_subgraphs(graph, array_field(doc, path_, "subgraphs"));
    const Json& nodes = array_field(doc, path_, "nodes");
    for (std::size_t i = 0; i < nodes.size(); ++i) read_node(graph, nodes[i], fmt::format("{}.nodes[{}]", path_, i));
    const Json& guards = array_field(doc, path_, "guards");
    for (std::size_t i = 0; i < guards.size(); ++i) {
      const std::string at = fmt::format("{}.guards[{}]", path_, i);
      if (!guards[i].is_object()) fail(at, "is {}, not an object", guards[i].type_name());
      const Json& input = field(guards[i], at, "input", Json::value_t::string);
      if (!guards[i].contains("value")) fail(at, "has no \"value\"");
      graph.add_guard(input.get<std::string>(), read_argument(guards[i]["value"], at + ".value", 0));
    }
    if (doc.contains("size_guards")) {
      const Json& size_guards = array_field(doc, path_, "size_guards");
      for (std::size_t i = 0; i < size_guards.size(); ++i) read_size_guard(graph, size_guards[i], fmt::format("{}.size_guards[{}]", path_, i));
    }
    try {
      graph.lint();
    } catch (const LintError& e) {
      fail(path_, "describes a malformed graph: {}", e.what());
    }
    return graph;
  }

  // The static readers serve the other documents too (json_document.hpp).
  template <class... A>
  [[noreturn]] static void fail(const std::string& at, fmt::format_string<A...> what, A&&... args) {
    detail::document_error(at, what, std::forward<A>(args)...);
  }

  /// True for an unsigned integer beyond the int64 range (get<int64_t> would wrap it).
  static bool too_large(const Json& j) {
    return j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  }

  static const char* type_word(Json::value_t t) {
    switch (t) {
      case Json::value_t::string: return "a string";
      case Json::value_t::array: return "an array";
      case Json::value_t::object: return "an object";
      case Json::value_t::boolean: return "a boolean";
      default: return "an integer";
    }
  }

  static const Json& field(const Json& object, const std::string& at, const char* key, Json::value_t type) {
    auto it = object.find(key);
    if (it == object.end()) fail(at, "has no \"{}\"", key);
    const bool ok = type == Json::value_t::number_integer ? it->is_number_integer() : it->type() == type;
    if (!ok) fail(at + "." + key, "is {}, not {}", it->type_name(), type_word(type));
    return *it;
  }

  static const Json& array_field(const Json& object, const std::string& at, const char* key) {
    return field(object, at, key, Json::value_t::array);
  }

  static DType read_dtype(const Json& j, const std::string& at) {
    if (!j.is_string()) fail(at, "is {}, not a dtype name", j.type_name());
    const std::optional<DType> d = parse_dtype(j.get<std::string>());
    if (!d) fail(at, "'{}' is not a dtype; use float32, int64 or bool", j.get<std::string>());
    return *d;
  }

  /// The named dims of a document ("dims"), by name.
  using DimRanges = std::vector<std::pair<std::string, SymRange>>;

  /// A size expression at `at`; its names must be in `ranges` (when given; else a name has the
  /// default range).
  static SymExpr read_expr(const std::string& text, const std::string& at, const DimRanges* ranges) {
    std::string undeclared;  // the first name "dims" lacks (reported after the parse, not from inside it)
    const auto range_of = [&](std::string_view name) {
      if (ranges == nullptr) return SymRange{};
      for (const auto& [n, r] : *ranges)
        if (n == name) return r;
      if (undeclared.empty()) undeclared = std::string(name);
      return SymRange{};
    };
    SymExpr e;
    try {
      e = SymExpr::parse(text, range_of);
    } catch (const std::invalid_argument& error) {
      fail(at, "{}", error.what());
    }
    if (!undeclared.empty())
      fail(at, "'{}' names the dim '{}', which the document's \"dims\" does not declare", text, undeclared);
    return e;
  }

  static Shape read_shape(const Json& j, const std::string& at, const DimRanges* ranges = nullptr) {
    if (j.is_null()) return Shape::unknown_rank();
    if (!j.is_array()) fail(at, "is {}, not an array of sizes or null", j.type_name());
    if (j.size() > 64) fail(at, "has {} dims; at most 64 are read", j.size());
    Shape shape = Shape::unknown(0);
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (j[i].is_null()) {
        shape.push_back(Dim());
      } else if (j[i].is_number_integer() && !too_large(j[i]) && j[i].get<std::int64_t>() >= 0) {
        shape.push_back(Dim(j[i].get<std::int64_t>()));
      } else if (j[i].is_string()) {
        const std::string where = fmt::format("{}[{}]", at, i);
        const Dim d(read_expr(j[i].get<std::string>(), where, ranges));
        if (d.is_anonymous() || d.expr()->bounds().hi < 0) fail(where, "is {}, a size that is negative for every value of its dims", j[i].dump());
        shape.push_back(d);
      } else {
        fail(fmt::format("{}[{}]", at, i), "is {}; a size is an integer >= 0, an expression over named dims as a "
                                           "string, or null when unknown",
             j[i].dump());
      }
    }
    return shape;
  }

  static double read_float(const Json& j, const std::string& at) {
    if (j.is_number()) return j.get<double>();
    if (j.is_object() && j.size() == 1 && j.contains("float") && j["float"].is_string()) {
      const std::string s = j["float"].get<std::string>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(at, "is {}, not a number or {{\"float\": \"nan\" | \"inf\" | \"-inf\"}}", j.dump());
  }

 private:
  Argument read_argument(const Json& j, const std::string& at, int depth) const {
    if (depth > max_depth) fail(at, "nests lists deeper than {} levels", max_depth);
    switch (j.type()) {
      case Json::value_t::null: return Argument();
      case Json::value_t::boolean: return Argument(j.get<bool>());
      case Json::value_t::number_integer: return Argument(j.get<std::int64_t>());
      case Json::value_t::number_unsigned: {
        if (j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          fail(at, "{} does not fit a 64-bit signed integer", j.dump());
        }
        return Argument(static_cast<std::int64_t>(j.get<std::uint64_t>()));
      }
      case Json::value_t::number_float: return Argument(j.get<double>());
      case Json::value_t::string: return Argument(j.get<std::string>());
      case Json::value_t::array: {
        ArgumentList items;
        items.reserve(j.size());
        for (std::size_t i = 0; i < j.size(); ++i) items.push_back(read_argument(j[i], fmt::format("{}[{}]", at, i), depth + 1));
        return Argument(std::move(items));
      }
      case Json::value_t::object: {
        if (j.size() == 1 && j.contains("node")) {
          const Json& name = j["node"];
          if (!name.is_string()) fail(at, "{{\"node\": ...}} holds {}, not a node name", name.type_name());
          auto it = ids_.find(name.get<std::string>());
          if (it == ids_.end()) fail(at, "refers to '{}', which no earlier node is called; define nodes before their users", name.get<std::string>());
          return Argument(it->second);
        }
        if (j.size() == 1 && j.contains("dtype")) return Argument(read_dtype(j["dtype"], at + ".dtype"));
        if (j.size() == 1 && j.contains("float")) return Argument(read_float(j, at));
        fail(at, "is an object that is not an argument: {{\"node\": name}}, {{\"dtype\": name}} or {{\"float\": ...}}");
      }
      default: fail(at, "is {}, which is not an argument", j.type_name());
    }
  }

  void read_node(Graph& graph, const Json& j, const std::string& at_index) {
    if (!j.is_object()) fail(at_index, "is {}, not an object", j.type_name());
    const std::string name = field(j, at_index, "name", Json::value_t::string).get<std::string>();
    const std::string at = fmt::format("{} (%{})", at_index, name);
    if (name.empty()) fail(at_index + ".name", "is empty; every node has a name");
    if (ids_.contains(name)) fail(at, "the name '{}' is used by an earlier node; names are unique", name);
    const std::string op_text = field(j, at, "op", Json::value_t::string).get<std::string>();
    const std::optional<OpKind> op = parse_op(op_text);
    if (!op) fail(at + ".op", "'{}' is not an opcode; use placeholder, get_attr, call_function, call_method, call_module or output", op_text);
    const std::string target = field(j, at, "target", Json::value_t::string).get<std::string>();
    const Json& args_json = field(j, at, "args", Json::value_t::array);
    const Json& kwargs_json = field(j, at, "kwargs", Json::value_t::object);
    Arguments args;
    for (std::size_t i = 0; i < args_json.size(); ++i) args.push_back(read_argument(args_json[i], fmt::format("{}.args[{}]", at, i), 0));
    KeywordArguments kwargs;
    for (const auto& [key, value] : kwargs_json.items()) kwargs.emplace_back(key, read_argument(value, fmt::format("{}.kwargs.{}", at, key), 0));
    std::optional<TensorMeta> meta;
    const Json& dtype = j.contains("dtype") ? j["dtype"] : Json();
    if (!dtype.is_null()) meta = TensorMeta{read_dtype(dtype, at + ".dtype"), read_shape(j.contains("shape") ? j["shape"] : Json(), at + ".shape", &dims_)};
    Node* node = nullptr;
    try {
      node = &graph.create_node(*op, target, std::move(args), std::move(kwargs), name, std::source_location());
    } catch (const std::invalid_argument& e) {
      fail(at, "cannot be made: {}", e.what());
    }
    if (node->name() != name) fail(at + ".name", "'{}' is not a name a node can have (it would be '{}')", name, node->name());
    ids_.emplace(name, node->id());
    node->set_tensor_meta(std::move(meta));
    if (j.contains("scope")) {
      if (!j["scope"].is_string()) fail(at + ".scope", "is {}, not a string", j["scope"].type_name());
      node->set_scope(j["scope"].get<std::string>());
    }
    if (j.contains("source") && !j["source"].is_null()) {
      if (!j["source"].is_string()) fail(at + ".source", "is {}, not \"file:line\" or null", j["source"].type_name());
      node->set_meta("source", Argument(j["source"].get<std::string>()));
    }
    if (j.contains("meta")) {
      if (!j["meta"].is_object()) fail(at + ".meta", "is {}, not an object", j["meta"].type_name());
      for (const auto& [key, value] : j["meta"].items()) node->set_meta(key, read_argument(value, fmt::format("{}.meta.{}", at, key), 0));
    }
    if (j.contains("impure")) {
      if (!j["impure"].is_boolean()) fail(at + ".impure", "is {}, not a boolean", j["impure"].type_name());
      if (j["impure"].get<bool>() && !node->is_impure()) node->set_impure();
    }
  }

  static std::optional<OpKind> parse_op(std::string_view text) {
    for (OpKind k : {OpKind::placeholder, OpKind::get_attr, OpKind::call_function, OpKind::call_method,
                     OpKind::call_module, OpKind::output}) {
      if (fmt::format("{}", k) == text) return k;
    }
    return std::nullopt;
  }

  void read_constants(Graph& graph, const Json& constants) const {
    for (std::size_t i = 0; i < constants.size(); ++i) {
      const std::string at = fmt::format("{}.constants[{}]", path_, i);
      const Json& c = constants[i];
      if (!c.is_object()) fail(at, "is {}, not an object", c.type_name());
      const std::string name = field(c, at, "name", Json::value_t::string).get<std::string>();
      const DType dtype = read_dtype(c.contains("dtype") ? c["dtype"] : Json(), at + ".dtype");
      const Shape shape = read_shape(c.contains("shape") ? c["shape"] : Json(), at + ".shape");
      if (!shape.is_fully_known()) fail(at + ".shape", "must give every size of a constant");
      std::int64_t numel = 1;
      for (Dim d : shape) {
        if (d.value() != 0 && numel > max_constant_elements / d.value()) fail(at + ".shape", "holds more than {} elements", max_constant_elements);
        numel *= d.value();
      }
      const Json& data = field(c, at, "data", Json::value_t::array);
      if (static_cast<std::int64_t>(data.size()) != numel) {
        fail(at + ".data", "has {} values for shape {}, which holds {}", data.size(), to_string(shape), numel);
      }
      const IntList sizes = shape.sizes();
      Tensor t;
      if (dtype == DType::int64) {
        std::vector<std::int64_t> v;
        for (std::size_t k = 0; k < data.size(); ++k) {
          if (!data[k].is_number_integer() || too_large(data[k])) {
            fail(fmt::format("{}.data[{}]", at, k), "is {}, not a 64-bit integer", data[k].dump());
          }
          v.push_back(data[k].get<std::int64_t>());
        }
        t = tensor(v, {numel});
      } else if (dtype == DType::bool_) {
        std::vector<bool> v;
        for (std::size_t k = 0; k < data.size(); ++k) {
          if (!data[k].is_boolean()) fail(fmt::format("{}.data[{}]", at, k), "is {}, not a boolean", data[k].dump());
          v.push_back(data[k].get<bool>());
        }
        t = tensor(v, {numel});
      } else {
        std::vector<float> v;
        for (std::size_t k = 0; k < data.size(); ++k) v.push_back(static_cast<float>(read_float(data[k], fmt::format("{}.data[{}]", at, k))));
        t = tensor(v, {numel});
      }
      const std::string made = graph.add_constant(t.reshape(SymIntList(sizes)));
      if (made != name) fail(at + ".name", "is '{}', but constants are named in order: this one is '{}'", name, made);
    }
  }

  void read_subgraphs(Graph& graph, const Json& subgraphs) const {
    for (std::size_t i = 0; i < subgraphs.size(); ++i) {
      const std::string at = fmt::format("{}.subgraphs[{}]", path_, i);
      const Json& s = subgraphs[i];
      if (!s.is_object()) fail(at, "is {}, not an object", s.type_name());
      const std::string name = field(s, at, "name", Json::value_t::string).get<std::string>();
      if (depth_ + 1 > max_depth) fail(at, "nests subgraphs deeper than {} levels", max_depth);
      if (!s.contains("graph")) fail(at, "has no \"graph\"");
      Graph sub = Reader(at + ".graph", depth_ + 1).read(s["graph"]);
      const std::size_t cut = name.find_last_of('_');
      const std::string base = cut == std::string::npos ? name : name.substr(0, cut);
      const std::string made = graph.add_subgraph(base, std::move(sub));
      if (made != name) fail(at + ".name", "is '{}', but subgraphs are named by base and count: this one is '{}'", name, made);
    }
  }

  void read_dims(const Json& j, const std::string& at) {
    if (!j.is_object()) fail(at, "is {}, not an object of dims and their ranges", j.type_name());
    for (const auto& [name, bounds] : j.items()) {
      const std::string where = at + "." + name;
      const auto bound = [&](const Json& b, std::int64_t none) {
        if (b.is_null()) return none;
        if (!b.is_number_integer() || too_large(b)) fail(where, "has the bound {}, not an integer or null", b.dump());
        return b.get<std::int64_t>();
      };
      if (!bounds.is_array() || bounds.size() != 2) fail(where, "is {}, not [lo, hi] (null for no bound)", bounds.dump());
      const SymRange range{bound(bounds[0], -SymRange::unbounded), bound(bounds[1], SymRange::unbounded)};
      try {
        (void)SymExpr::symbol(name, range);
      } catch (const std::invalid_argument& e) {
        fail(where, "{}", e.what());
      }
      dims_.emplace_back(name, range);
    }
  }

  void read_size_guard(Graph& graph, const Json& j, const std::string& at) {
    if (!j.is_object()) fail(at, "is {}, not an object", j.type_name());
    const Json& fact = field(j, at, "fact", Json::value_t::string);
    std::string undeclared;
    const auto range_of = [&](std::string_view name) {
      for (const auto& [n, r] : dims_)
        if (n == name) return r;
      if (undeclared.empty()) undeclared = std::string(name);
      return SymRange{};
    };
    SymFact f;
    try {
      f = SymFact::parse(fact.get<std::string>(), range_of);
    } catch (const std::invalid_argument& e) {
      fail(at + ".fact", "{}", e.what());
    }
    if (!undeclared.empty())
      fail(at + ".fact", "names the dim '{}', which the document's \"dims\" does not declare", undeclared);
    std::source_location where;
    if (j.contains("source") && !j["source"].is_null()) {
      const std::string source = j["source"].is_string() ? j["source"].get<std::string>() : std::string();
      const std::size_t colon = source.rfind(':');
      std::uint32_t line = 0;
      const char* end = source.data() + source.size();
      if (colon == std::string::npos || std::from_chars(source.data() + colon + 1, end, line).ptr != end || line == 0)
        fail(at + ".source", "is {}, not \"file:line\" or null", j["source"].dump());
      where = detail::make_source_location(std::string_view(source).substr(0, colon), line, "", 0);
    }
    graph.add_size_guard(f, where);
  }

  std::string path_;
  int depth_;
  DimRanges dims_;
  std::unordered_map<std::string, NodeId> ids_;
};

}  // namespace

namespace detail {

Json parse_document(std::string_view text, std::string_view reader) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number too large to read
    throw std::invalid_argument(fmt::format("{}: the document is not JSON: {}", reader, e.what()));
  }
}

const Json& document_field(const Json& object, const std::string& at, const char* key, Json::value_t type) {
  return Reader::field(object, at, key, type);
}

bool too_large_for_int64(const Json& j) { return Reader::too_large(j); }

Json write_graph_document(const Graph& graph) { return write_graph(graph); }
Json write_shape_document(const Shape& shape) { return write_shape(shape); }

Graph read_graph_document(const Json& doc, const std::string& at, int depth) {
  if (depth > max_depth) document_error(at, "nests graphs deeper than {} levels", max_depth);
  return Reader(at, depth).read(doc);
}

Shape read_shape_document(const Json& j, const std::string& at) { return Reader::read_shape(j, at); }
DType read_dtype_document(const Json& j, const std::string& at) { return Reader::read_dtype(j, at); }

}  // namespace detail

std::string graph_to_json(const Graph& graph, int indent) { return write_graph(graph).dump(indent) + "\n"; }

Graph graph_from_json(std::string_view document) {
  const Json doc = detail::parse_document(document, "graph_from_json");
  try {
    return Reader("document", 0).read(doc);
  } catch (const detail::DocumentError& e) {
    throw std::invalid_argument(fmt::format("graph_from_json: {}", e.what()));
  } catch (const Json::exception& e) {  // every access is checked first; this is the last line of defence
    throw std::invalid_argument(fmt::format("graph_from_json: the document cannot be read: {}", e.what()));
  }
}

}  // namespace symtrace
