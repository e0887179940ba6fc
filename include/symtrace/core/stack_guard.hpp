#pragma once
/// \file
/// The stack guard of module calls (Note [Stack guard] in src/core/stack_guard.cpp): a model
/// nested deeper than the thread's stack can hold gets a `StackDepthError` at the module call
/// that would overflow the stack, instead of a segmentation fault. Module calls check it
/// (`Module::call`, a tracer's `call_module`) with one thread-local load and a compare.

#include "symtrace/core/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace symtrace {

/// Module calls nested deeper than the thread's stack can hold (a chain of thousands of
/// modules on a small thread stack), thrown at the call that would overflow it instead of a
/// crash. It is no failure of a module: a robust trace does not turn it into a leaf, it ends
/// the trace. The message names the call site and, during a trace, the depth and the module
/// being traced through.
class StackDepthError : public Error {
 public:
  StackDepthError(const std::string& message, std::size_t depth) : Error(message), depth_(depth) {}
  /// How many modules the trace was in when it stopped (the root counts as one); 0 outside
  /// a trace.
  [[nodiscard]] std::size_t depth() const noexcept { return depth_; }

 private:
  std::size_t depth_;
};

namespace detail {

/// The lowest frame address at which a module call may start on this thread. Until the
/// thread's first check it is the highest address, so that the first check takes the slow
/// path, which reads the thread's stack bounds. Initial-exec: one load, also from a shared
/// library.
extern thread_local std::uintptr_t t_stack_limit __attribute__((tls_model("initial-exec")));

/// True when the caller's frame lies below this thread's limit; `stack_exhausted()` then
/// tells whether the stack really is too nearly used up. One load and a compare.
[[gnu::always_inline]] inline bool stack_may_be_low() noexcept {
  return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) < t_stack_limit;
}

/// The slow path after `stack_may_be_low()`: reads this thread's stack bounds the first time;
/// true when the caller's frame is within them and below the limit (a frame on another stack,
/// a coroutine's or a signal handler's, is never judged exhausted).
[[gnu::noinline, gnu::cold]] bool stack_exhausted() noexcept;

/// The why and what-to-do clauses of a StackDepthError's message: "the thread's stack (8 MiB)
/// is nearly used up ...; run the model on a thread with a larger stack ...".
[[nodiscard]] std::string stack_depth_advice();

/// The room a module call keeps free below it for the work it does before the next module
/// call checks again, and for throwing the error: 64 KiB (256 KiB with AddressSanitizer,
/// whose frames are larger), at most a quarter of the stack.
[[nodiscard]] std::size_t stack_reserve(std::size_t stack_size) noexcept;

}  // namespace detail
}  // namespace symtrace
