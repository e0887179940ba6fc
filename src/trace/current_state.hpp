#pragma once
// The trace layer's own view of TracingState::current(): the thread-local itself, so that the
// tracer's per-node path (Tracer::state()) reads it without a call.

namespace symtrace {
class TracingState;
namespace detail {
/// This thread's innermost active trace, kept by TraceScope (tracing_state.cpp).
extern constinit thread_local TracingState* t_tracing_state;
}  // namespace detail
}  // namespace symtrace
