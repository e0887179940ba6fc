#pragma once
/// \file
/// The robust layer: RobustTracer, GraphCollection and recursive_trace.

#include "symtrace/robust/graph_collection.hpp"
#include "symtrace/robust/robust_tracer.hpp"
