#pragma once
// Internal (symtrace::detail, not part of the API): the one writer of a report's failure
// records, shared by the two report documents: the coverage report's JSON (coverage_report.cpp:
// a captured graph as its node count, a shape as text) and the report document
// (export/report_json.cpp: the graph and the shape as documents). Included by .cpp files only.

#include "symtrace/robust/collection_report.hpp"

#include <nlohmann/json.hpp>

namespace symtrace::detail {

/// How a report document writes what differs between the two: a graph captured by execution
/// (under the key `graph_key`) and an input's shape.
struct FailureJsonStyle {
  const char* graph_key;
  nlohmann::ordered_json (*graph)(const Graph& graph);
  nlohmann::ordered_json (*shape)(const Shape& shape);
};

/// An input's spec: `{"dtype", "shape"}` for a tensor, `{"list": [spec...]}`, `{"dict": {key:
/// spec}}`, and `{"value": v}` for a constant part of a list or dict (null, a bool, a number, a
/// string or a list of them).
[[nodiscard]] nlohmann::ordered_json input_spec_json(const InputSpec& spec, const FailureJsonStyle& style);

/// `{"module", "type", "kind", "message", "source", "op", "by_execution"}`: `source` and `op`
/// null when unknown; `by_execution` null, or `{graph_key, "inputs": [spec (input_spec_json)],
/// "warnings": [{"kind", "source", "module", "count", "message"}], "error"}`.
[[nodiscard]] nlohmann::ordered_json failure_json(const CollectionReport::Failure& failure, const FailureJsonStyle& style);

}  // namespace symtrace::detail
