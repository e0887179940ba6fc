#pragma once
// Internal to the trace layer: the checks that a value can become a node argument of a trace,
// made before anything is recorded (Note [A refused call leaves the graph unchanged] in
// tracer.cpp, which defines them for its per-node path). cond_recording.cpp checks a cond's
// operands and results with them too.

#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"

#include <source_location>

namespace symtrace {

class TracingState;

namespace detail {

/// Checks that tensor `t` can become a node argument in `state`: defined, and concrete or of
/// this trace (TraceError, std::invalid_argument).
void check_tensor(const TracingState& state, const Tensor& t, std::source_location where);

/// Checks that `value` can become a node argument in `state` without making anything: its
/// tensors as check_tensor does, its dicts' keys str.
void check_recordable(const TracingState& state, const Value& value, std::source_location where);

}  // namespace detail
}  // namespace symtrace
