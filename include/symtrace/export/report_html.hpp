#pragma once
/// \file
/// A collection's report as one self-contained HTML page: the module tree (folded and unfolded
/// like a file browser, each module with its status, type, node count and, given an analysis
/// summary, its parameters and MACs), totals, a search box, each failure with its file:line,
/// the op that refused and the lines of source around it, and each graph drawn as a graph
/// (laid out by graphviz's `dot` when the page is made; drawn by the page when it is opened,
/// with pan and zoom), whose `call_module` nodes link to their module's graph or failure.
/// Everything is inline: the page makes no network request.
///
///     symtrace::GraphCollection c = symtrace::recursive_trace(*model, {x});
///     std::string page = symtrace::report_to_html(symtrace::make_report(c, "resnet50_fail4"));
///     // or from a saved document:
///     std::string later = symtrace::report_to_html(symtrace::report_from_json(document));
///
/// The page holds the report as JSON in a `<script type="application/json">` element (every
/// `<`, `>` and `&` written as a `\u` escape, so no text of the model can end it), and puts
/// all text into the page as text, never as markup: names holding `<`, `&` or quotes show as
/// they are.

#include "symtrace/analysis/model_summary.hpp"
#include "symtrace/robust/collection_report.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

/// Options for `report_to_html`.
struct HtmlReportOptions {
  /// Graphviz's `dot`; "" finds it on PATH.
  std::string dot_program;
  /// Parameters and MACs per module (a summary of the same model, e.g. from
  /// `summarize(model, trace_for_analysis(model, inputs), name)`); null shows none.
  const ModelSummary* summary = nullptr;
  /// Source lines shown on each side of a failing line, when its file is readable now.
  std::size_t source_context = 4;
  /// Where a failure's relative file name ("src/zoo/failures.cpp") is looked for, in order.
  std::vector<std::string> source_roots{"."};
};

/// The page of `report` (see the file comment). Throws std::runtime_error when graphviz's dot
/// is not found or fails, and std::invalid_argument for a report without modules.
[[nodiscard]] std::string report_to_html(const CollectionReport& report, const HtmlReportOptions& options = {});

/// The page of `collection`, made by `recursive_trace` of the model called `model_name`:
/// `report_to_html(make_report(collection, model_name), options)`.
[[nodiscard]] std::string report_to_html(const GraphCollection& collection, std::string_view model_name,
                                         const HtmlReportOptions& options = {});

}  // namespace symtrace
