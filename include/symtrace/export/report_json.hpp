#pragma once
/// \file
/// A whole GraphCollection as a JSON document, and back: the report (module tree, statuses,
/// failures) with every graph as a graph document (graph_json.hpp). The document round-trips
/// exactly: a report read back exports to the same document, prints the same coverage report,
/// and holds graphs that print as the originals.
///
/// The document (`report_json_version` 1):
///
///     {"format": "symtrace.report", "version": 1, "model": "resnet50_fail1",
///      "modules": [{"module": "", "type": "ResNet", "status": "traced",
///                   "children": [{"name": "conv1", "index": 1}, ...]}, ...],
///      "failed": [{"module", "type", "kind", "message", "source", "op", "by_execution"}],
///      "graphs": [{"module": "", "type": "ResNet", "graph": {...a graph document...}}]}
///
/// `modules` lists the model's modules in the hierarchy's order, the model first (path "");
/// a child names its module by index in that list (a shared module is listed once, and named
/// by every parent that holds it). `status` is traced, leaf, failed or unvisited. In a failure,
/// `source` ("file:line") and `op` are null when unknown; `by_execution` is null, or
/// `{"graph": graph document or null, "inputs": [{"dtype", "shape"}], "warnings": [{"kind",
/// "source", "module", "count", "message"}], "error": text or null}`.
///
///     symtrace::GraphCollection c = symtrace::recursive_trace(*model, {x});
///     std::string doc = symtrace::report_to_json(symtrace::make_report(c, "resnet50_fail1"));
///     symtrace::CollectionReport back = symtrace::report_from_json(doc);
///     fmt::print("{}", symtrace::coverage_report(back));   // the report of c

#include "symtrace/robust/collection_report.hpp"

#include <string>
#include <string_view>

namespace symtrace {

/// The version of the document `report_to_json` writes and `report_from_json` reads.
inline constexpr int report_json_version = 1;

/// `report` as a JSON document (indented by `indent` spaces; -1 for one line).
[[nodiscard]] std::string report_to_json(const CollectionReport& report, int indent = 1);

/// The report a document describes. The document is treated as hostile, as by
/// `graph_from_json` (whose checks every embedded graph passes): a missing or mistyped field,
/// an unknown status, a child index out of range, a path or child name used twice, a module
/// tree deeper than 256 levels, or two records for one module gives std::invalid_argument
/// naming the place (`modules[3].children[0].index: ...`) and what to fix; no report is made.
[[nodiscard]] CollectionReport report_from_json(std::string_view document);

}  // namespace symtrace
