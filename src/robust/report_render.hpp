#pragma once
// Printing a coverage report needs each graph's module, type and node count, not the graph:
// the report of a GraphCollection is printed from the collection's graphs in place, without
// the copies a CollectionReport holds.
#include "symtrace/robust/collection_report.hpp"

#include <cstddef>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace::detail {

/// One graph of a report, as the report prints it.
struct ReportGraph {
  std::string_view module;
  std::string_view type;
  std::size_t nodes = 0;
};

/// The report of `collection`, with copies of its graphs only when `copy_graphs` (else
/// `graphs` is empty). Throws std::invalid_argument for a collection that holds no trace.
[[nodiscard]] CollectionReport describe_collection(const GraphCollection& collection, std::string_view model_name,
                                                   bool copy_graphs, std::source_location where);

/// The coverage report of `report`, whose graphs are `graphs`.
[[nodiscard]] std::string render_report(const CollectionReport& report, const std::vector<ReportGraph>& graphs,
                                        ReportFormat format, std::source_location where);

}  // namespace symtrace::detail
