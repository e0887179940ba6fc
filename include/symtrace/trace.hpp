#pragma once
/// \file
/// The `trace` layer: symbolic tracing of modules into graphs (Tracer, symbolic_trace,
/// InputSpec, TracingState, cond).

#include "symtrace/trace/cond.hpp"
#include "symtrace/trace/input_spec.hpp"
#include "symtrace/trace/tracer.hpp"
#include "symtrace/trace/tracing_state.hpp"
