#pragma once
/// \file
/// What a `GraphCollection` found, without the model: the module tree with each module's
/// status, the failure records, and copies of the graphs. A `CollectionReport` outlives the
/// model and the collection, prints as the coverage report (`coverage_report`), and travels
/// between programs as a JSON document (`report_to_json` / `report_from_json` in
/// symtrace/export/report_json.hpp).
///
///     symtrace::GraphCollection c = symtrace::recursive_trace(*model, {x});
///     symtrace::CollectionReport r = symtrace::make_report(c, "resnet50_fail1");
///     fmt::print("{}", symtrace::coverage_report(r));      // as coverage_report(c, name)

#include "symtrace/graph/graph.hpp"
#include "symtrace/robust/coverage_report.hpp"
#include "symtrace/robust/module_hierarchy.hpp"
#include "symtrace/trace/tracer.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

/// A GraphCollection's results as plain data (see the file comment). Every location is text
/// ("file:line", empty when unknown), so a report read from a document is whole.
struct CollectionReport {
  /// A child of a module: its attribute name and the child's index in `modules`.
  struct Child {
    std::string name;
    std::size_t index = 0;
    friend bool operator==(const Child&, const Child&) = default;
  };
  /// A module of the model, in the hierarchy's order (`modules[0]` is the model).
  struct ModuleEntry {
    std::string path;  ///< its first path in the model ("" for the model)
    std::string type;
    ModuleStatus status = ModuleStatus::unvisited;
    std::vector<Child> children;  ///< in registration order, shared modules included
    friend bool operator==(const ModuleEntry&, const ModuleEntry&) = default;
  };
  /// A place where a graph captured by execution read tensor data.
  struct Warning {
    std::string kind;    ///< "value_read" or "branch"
    std::string source;  ///< "file:line"
    std::string module;  ///< the innermost module running ("" for the root)
    std::size_t count = 1;
    std::string message;
    friend bool operator==(const Warning&, const Warning&) = default;
  };
  /// A failed module's capture by execution, or why it could not be captured.
  struct ByExecution {
    std::optional<Graph> graph;  ///< empty when the module could not be captured
    std::vector<InputSpec> inputs;
    std::vector<Warning> warnings;
    std::string error;  ///< why it could not be captured, else empty
  };
  /// A module that could not be traced (a ModuleFailure with its location as text).
  struct Failure {
    std::string module;
    std::string type;
    std::string kind;
    std::string message;
    std::string source;  ///< "file:line", empty when the exception carried none
    std::string op;      ///< the op that refused its input, else empty
    /// Its result's metadata in its caller's graph came from running it ("shape by execution").
    bool result_by_execution = false;
    std::optional<ByExecution> by_execution;
  };
  /// A module traced as a root, with its graph.
  struct GraphEntry {
    std::string module;
    std::string type;
    Graph graph;
  };

  std::string model;  ///< the model's name, as the report prints it
  std::vector<ModuleEntry> modules;
  std::vector<Failure> failures;   ///< in the order they were found
  std::vector<GraphEntry> graphs;  ///< in the order of the collection (breadth first)

  /// The number of modules with `status`.
  [[nodiscard]] std::size_t count(ModuleStatus status) const noexcept;
  /// The number of nodes over all graphs.
  [[nodiscard]] std::size_t total_nodes() const noexcept;
};

/// The report of `collection`, made by `recursive_trace` of the model called `model_name`; the
/// graphs are copied. Throws std::invalid_argument for a collection that holds no trace.
[[nodiscard]] CollectionReport make_report(const GraphCollection& collection, std::string_view model_name,
                                           std::source_location where = std::source_location::current());

/// The coverage report of `report` as text or as JSON: for a report made by `make_report(c,
/// name)`, exactly `coverage_report(c, name, format)`. Throws std::invalid_argument for a
/// report without modules.
[[nodiscard]] std::string coverage_report(const CollectionReport& report, ReportFormat format = ReportFormat::text,
                                          std::source_location where = std::source_location::current());

}  // namespace symtrace
