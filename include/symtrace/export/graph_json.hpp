#pragma once
/// \file
/// A graph as a JSON document, and back: a versioned exchange format that round-trips exactly
/// (the imported graph prints as the exported one, and exports to the same document).
///
/// The document (`graph_json_version` 1):
///
///     {"format": "symtrace.graph", "version": 1,
///      "nodes": [{"name", "op", "target", "args": [...], "kwargs": {...}, "dtype", "shape",
///                 "scope", "source", "meta": {...}, "impure"}],
///      "guards": [{"input", "value"}],
///      "constants": [{"name", "dtype", "shape", "data": [...]}],
///      "subgraphs": [{"name", "graph": {...the same document...}}]}
///
/// `op` is fx's opcode; `dtype` a dtype name or null; `shape` an array of sizes (null for an
/// unknown size) or null when the rank is unknown; `source` is "file:line" or null (kept as
/// text on import: an imported node's `where()` is empty and its `meta("source")` holds it).
/// An argument is null (None), a boolean, an integer, a number with a fraction or exponent
/// (a float: `2.0`), a string, `{"node": "name"}` for a node defined earlier, `{"dtype":
/// "float32"}`, `{"float": "nan" | "inf" | "-inf"}` for a float JSON cannot spell, or an array
/// of arguments.

#include "symtrace/graph/graph.hpp"

#include <string>
#include <string_view>

namespace symtrace {

/// The version of the document `graph_to_json` writes and `graph_from_json` reads.
inline constexpr int graph_json_version = 1;

/// `graph` as a JSON document (indented by `indent` spaces; -1 for one line).
[[nodiscard]] std::string graph_to_json(const Graph& graph, int indent = 1);

/// The graph a document describes. The document is treated as hostile: malformed JSON, a
/// missing or mistyped field, an unknown op or dtype, a reference to a node not defined
/// before its user, a name used twice, a constant whose data does not fill its shape, nesting
/// deeper than 64 levels, or anything that would make a graph that fails lint gives
/// std::invalid_argument naming the place in the document (`nodes[3] (%add): args[1]: ...`)
/// and what to fix; no graph is made.
[[nodiscard]] Graph graph_from_json(std::string_view document);

}  // namespace symtrace
