#pragma once
/// \file
/// The coverage report of a `GraphCollection`: what `recursive_trace` captured of a model and
/// what it could not, as readable text or as JSON (the `report` format the README documents).
///
///     symtrace::GraphCollection c = symtrace::recursive_trace(*model, {x});
///     fmt::print("{}", symtrace::coverage_report(c, "resnet50_fail1"));   // returns the text
///
/// Text: a summary, the module tree with each module's status (failed modules with their
/// file:line), the failures with their reasons, the graphs with their node counts, and the
/// unvisited modules. JSON:
///
///     {"model": "resnet50_fail1",
///      "graphs": [{"module": "", "type": "ResNet", "nodes": 183}, ...],
///      "failed": [{"module": "layer3.5", "type": "FailingBottleneck", "kind": "TraceError",
///                  "message": "...", "source": "src/zoo/failures.cpp:41", "op": null}],
///      "unvisited": ["..."],
///      "modules": [{"module": "", "type": "ResNet", "status": "traced"}, ...],
///      "totals": {"modules": 152, "traced": 18, "leaf": 133, "failed": 1, "unvisited": 0,
///                 "graphs": 9, "nodes": 212}}
///
/// `module` is a module's path in the model ("" for the model itself); `source` is null when
/// the failure carried no location; `op` names the op that refused its input (OpError), else null.

#include <source_location>
#include <string>
#include <string_view>

namespace symtrace {

class GraphCollection;

/// The output format of `coverage_report`.
enum class ReportFormat : unsigned char {
  text,
  json
};

/// The coverage report of `collection`, made by `recursive_trace` of the model called
/// `model_name` (see the file comment). Throws std::invalid_argument for a collection that
/// holds no trace.
[[nodiscard]] std::string coverage_report(const GraphCollection& collection, std::string_view model_name,
                                          ReportFormat format = ReportFormat::text,
                                          std::source_location where = std::source_location::current());

}  // namespace symtrace
