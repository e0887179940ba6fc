// `symtrace report MODEL`, or `symtrace report REPORT.json` for a report saved with
// `--format document` (the library's report_to_json).
#include "commands.hpp"
#include "hierarchy_dot.hpp"
#include "model_inputs.hpp"

#include <symtrace/export/report_html.hpp>
#include <symtrace/export/report_json.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

namespace symtrace::cli {

namespace {

/// True when MODEL names a report document (a `.json` file) rather than a model.
bool is_report_document(const std::string& model) { return model.ends_with(".json"); }

/// The report document at `path`; std::invalid_argument (exit 2) when it cannot be read.
CollectionReport read_report_document(const Options& options) {
  std::ifstream file(options.model, std::ios::binary);
  if (!file) throw std::invalid_argument(fmt::format("cannot read the report document '{}'", options.model));
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  try {
    return report_from_json(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", options.model, e.what()));
  }
}

int report_of_document(const Options& options, Output& output) {
  if (!options.inputs.empty())
    throw UsageError(options.command, fmt::format("{} is a saved report: it takes no --input", options.model));
  if (options.by_execution)
    throw UsageError(options.command,
                     fmt::format("{} is a saved report: --by-execution needs the model, which it does not hold",
                                 options.model));
  if (options.format == "dot" || options.format == "svg")
    throw UsageError(options.command,
                     fmt::format("a saved report prints as text, json, html or document, not {}", options.format));
  const CollectionReport report = read_report_document(options);
  if (options.format == "document") {
    output.write(report_to_json(report));
  } else if (options.format == "html") {
    output.write(report_to_html(report, HtmlReportOptions{.dot_program = output.dot_program()}));
  } else {
    output.write(coverage_report(report, options.format == "json" ? ReportFormat::json : ReportFormat::text));
  }
  return exit_ok;
}

}  // namespace

int report_command(const Options& options, Output& output, std::ostream& /*err*/) {
  if (is_report_document(options.model)) return report_of_document(options, output);
  const zoo::ModelInfo info = find_model(options);
  const std::vector<InputSpec> specs = input_specs(info, options);
  const std::shared_ptr<Module> model = info.create();
  GraphCollection collection;
  collection.capture_failed_by_execution(options.by_execution);
  // A failing root (its own code, or input its layers refuse) is reported like any failed
  // module, with its children traced as roots: the report is never lost.
  collection.recursive_trace(*model, specs);
  if (options.format == "text") {
    output.write(coverage_report(collection, info.name));
  } else if (options.format == "json") {
    output.write(coverage_report(collection, info.name, ReportFormat::json));
  } else if (options.format == "document") {
    output.write(report_to_json(make_report(collection, info.name)));
  } else if (options.format == "html") {
    // The page shows each module's parameters and MACs, from a trace for analysis (built-in
    // layers traced through), as `symtrace analyze` counts them.
    const ModelSummary summary = summarize(*model, trace_for_analysis(*model, specs), info.name);
    output.write(report_to_html(collection, info.name,
                                HtmlReportOptions{.dot_program = output.dot_program(), .summary = &summary}));
  } else if (options.format == "svg") {
    output.write_svg(hierarchy_dot(collection, info.name));
  } else {
    output.write(hierarchy_dot(collection, info.name));
  }
  return exit_ok;
}

}  // namespace symtrace::cli
