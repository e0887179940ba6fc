// libFuzzer target: graph_from_json on any bytes. A document is either refused with
// std::invalid_argument or read into a graph that lints and exports to a document that reads
// back to the same graph; anything else (a crash, a sanitizer report, another exception, a
// graph that fails lint) is a finding.
//
//   tools/fuzz [SECONDS]
#include <symtrace/symtrace.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view document(reinterpret_cast<const char*>(data), size);
  symtrace::Graph graph;
  try {
    graph = symtrace::graph_from_json(document);
  } catch (const std::invalid_argument&) {
    return 0;  // refused, as it should be
  }
  graph.lint();  // a LintError escaping here is a finding
  const std::string again = symtrace::graph_to_json(graph);
  if (symtrace::graph_to_json(symtrace::graph_from_json(again)) != again) std::abort();
  return 0;
}
