#pragma once
// Printing a coverage report needs each graph's module, type and node count, not the graph:
// the report of a GraphCollection is printed from the collection's graphs and hierarchy in
// place, without the copies a CollectionReport holds.
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

/// The failures of `collection` as a report holds them, in order.
[[nodiscard]] std::vector<CollectionReport::Failure> describe_failures(const GraphCollection& collection);

}  // namespace symtrace::detail
