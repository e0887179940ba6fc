#pragma once
// The collection's capture by execution of the modules that failed (execution_capture.cpp).

#include "symtrace/graph/graph.hpp"
#include "symtrace/robust/trace_records.hpp"

#include <cstddef>

namespace symtrace::detail {

/// Captures by execution each failure of `records` from the `first`-th on that has no capture
/// yet, found by the trace of `traced` that made `graph`: the module runs
/// eagerly on synthetic inputs of the shapes of its first call, its capture (or why there is none)
/// goes into its failure record, and a captured graph becomes a subgraph of `graph`
/// (`by_execution_0`, ...) that the module's `call_module` nodes name in their metadata
/// (`by_execution`, with `specialised` true). The module's buffers are restored after its run.
void capture_by_execution(TraceRecords& records, std::size_t first, Graph& graph, const Module& traced);

}  // namespace symtrace::detail
