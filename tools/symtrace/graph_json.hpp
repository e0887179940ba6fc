#pragma once
// `symtrace trace --format json`: a graph in the trace format the README documents,
// {"model", "nodes": [{"name", "op", "target", "args", "kwargs", "shape", "dtype", "source"}],
//  "guards": [{"input", "value"}]}.

#include <symtrace/symtrace.hpp>

#include <nlohmann/json.hpp>

#include <string_view>

namespace symtrace::cli {

/// An argument as JSON: None null, bools, numbers and strings as themselves, a dtype
/// {"dtype": "float32"}, a node {"node": "name"}, a list an array.
[[nodiscard]] nlohmann::ordered_json argument_json(const Graph& graph, const Argument& argument);

/// The trace JSON of `graph`, traced from the model `model`. A shape is an array of sizes
/// (null for an unknown size) or null when even the rank is unknown; dtype and source
/// ("file:line") are null when unknown.
[[nodiscard]] nlohmann::ordered_json graph_json(const Graph& graph, std::string_view model);

}  // namespace symtrace::cli
