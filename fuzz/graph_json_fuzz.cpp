// libFuzzer target: graph_from_json and report_from_json on any bytes. A document is either
// refused with std::invalid_argument or read into a graph that lints (a report whose coverage
// report prints) and exports to a document that reads back to the same; anything else (a
// crash, a sanitizer report, another exception, a graph that fails lint) is a finding. Every
// graph read is also analysed (costs and channel groups), which must not throw on any graph.
//
//   tools/fuzz [SECONDS]
#include <symtrace/symtrace.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

/// The analyses of a graph read from any document: they must not throw.
void analyse(const symtrace::Graph& graph) {
  (void)symtrace::graph_cost(graph);
  const std::vector<symtrace::ChannelGroup> groups = symtrace::channel_groups(graph);
  for (const symtrace::ChannelGroup& g : groups) {
    if (g.channels < 0 || (!g.prunable && g.reason.empty())) std::abort();
  }
}

void read_report(std::string_view document) {
  symtrace::CollectionReport report;
  try {
    report = symtrace::report_from_json(document);
  } catch (const std::invalid_argument&) {
    return;  // refused, as it should be
  }
  for (const auto& g : report.graphs) {
    g.graph.lint();
    analyse(g.graph);
  }
  (void)symtrace::coverage_report(report, symtrace::ReportFormat::text);
  (void)symtrace::coverage_report(report, symtrace::ReportFormat::json);
  const std::string again = symtrace::report_to_json(report);
  if (symtrace::report_to_json(symtrace::report_from_json(again)) != again) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view document(reinterpret_cast<const char*>(data), size);
  read_report(document);
  symtrace::Graph graph;
  try {
    graph = symtrace::graph_from_json(document);
  } catch (const std::invalid_argument&) {
    return 0;  // refused, as it should be
  }
  graph.lint();  // a LintError escaping here is a finding
  analyse(graph);
  const std::string again = symtrace::graph_to_json(graph);
  if (symtrace::graph_to_json(symtrace::graph_from_json(again)) != again) std::abort();
  return 0;
}
