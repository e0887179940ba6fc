// The trace JSON of a graph (see graph_json.hpp).
#include "graph_json.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace symtrace::cli {
namespace {

using Json = nlohmann::ordered_json;

Json shape_json(const Shape& shape) {
  if (!shape.is_rank_known()) return nullptr;
  Json dims = Json::array();
  for (Dim d : shape) {
    if (d.is_known()) {
      dims.push_back(d.value());
    } else {
      dims.push_back(nullptr);
    }
  }
  return dims;
}

}  // namespace

Json argument_json(const Graph& graph, const Argument& a) {
  return boost::variant2::visit(
      overloaded{
          [](boost::variant2::monostate) -> Json { return nullptr; },
          [](bool b) -> Json { return b; },
          [](std::int64_t i) -> Json { return i; },
          [](double d) -> Json { return d; },
          [](const detail::Boxed<std::string>& s) -> Json { return s.get(); },
          [](DType t) -> Json { return Json{{"dtype", std::string(name(t))}}; },
          [&](NodeId id) -> Json { return Json{{"node", graph.node(id).name()}}; },
          [&](const detail::Boxed<ArgumentList>& list) -> Json {
            Json items = Json::array();
            for (const Argument& item : list.get()) items.push_back(argument_json(graph, item));
            return items;
          },
      },
      a.value);
}

Json graph_json(const Graph& graph, std::string_view model) {
  Json nodes = Json::array();
  for (const Node& n : graph.nodes()) {
    Json args = Json::array();
    for (const Argument& a : n.args()) args.push_back(argument_json(graph, a));
    Json kwargs = Json::object();
    for (const auto& [key, value] : n.kwargs()) kwargs[key] = argument_json(graph, value);
    const TensorMeta* meta = n.tensor_meta();
    Json source = n.where().line() == 0 ? Json(nullptr) : Json(fmt::format("{}:{}", n.where().file_name(), n.where().line()));
    nodes.push_back(Json{{"name", n.name()},
                         {"op", fmt::format("{}", n.op())},
                         {"target", std::string(n.target())},
                         {"args", std::move(args)},
                         {"kwargs", std::move(kwargs)},
                         {"shape", meta != nullptr ? shape_json(meta->shape) : Json(nullptr)},
                         {"dtype", meta != nullptr ? Json(std::string(name(meta->dtype))) : Json(nullptr)},
                         {"source", std::move(source)}});
  }
  Json guards = Json::array();
  for (const Graph::Guard& g : graph.guards()) guards.push_back(Json{{"input", g.input}, {"value", argument_json(graph, g.value)}});
  return Json{{"model", std::string(model)}, {"nodes", std::move(nodes)}, {"guards", std::move(guards)}};
}

}  // namespace symtrace::cli
