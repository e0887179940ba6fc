#pragma once
// The trace layer's own view of TracingState::current(): the thread-local itself, so that the
// tracer's per-node path (Tracer::state(), several reads per node) reads it without a call.
// initial-exec: one load at a fixed offset from the thread pointer, where the default model of
// a shared library calls __tls_get_addr on every read (+4-10% per traced node in tools/bench).

namespace symtrace {
class TracingState;
namespace detail {
/// This thread's innermost active trace, kept by TraceScope (tracing_state.cpp).
[[gnu::tls_model("initial-exec")]] extern constinit thread_local TracingState* t_tracing_state;
}  // namespace detail
}  // namespace symtrace
