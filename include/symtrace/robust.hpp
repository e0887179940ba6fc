#pragma once
/// \file
/// The robust layer: RobustTracer, GraphCollection, recursive_trace, the module hierarchy and
/// the coverage report.

#include "symtrace/robust/collection_report.hpp"
#include "symtrace/robust/coverage_report.hpp"
#include "symtrace/robust/graph_collection.hpp"
#include "symtrace/robust/module_hierarchy.hpp"
#include "symtrace/robust/robust_tracer.hpp"
#include "symtrace/robust/trace_records.hpp"
