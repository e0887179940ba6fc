// The stack guard of module calls.
//
// Note [Stack guard]: a model is a tree of modules, and its forward, eager or traced, nests a
// few C++ frames per level: a chain of 10,000 modules nests 10,000 module calls. A thread's
// stack is fixed (8 MiB for the main thread by default, often far less for others), and running
// past its end is a segmentation fault, not an exception. So a module call first compares the
// current frame's address with a per-thread limit: the stack's lowest address plus a reserve
// (stack_reserve) that holds what a call does before the next module call checks again (its
// ops, a leaf's metadata run, the tracer's bookkeeping) and the unwinding of the error. Below
// the limit the call throws StackDepthError. The limit starts at the highest address, so a
// thread's first check takes the slow path here, which reads the thread's stack bounds
// (pthread_getattr_np) once; a frame outside them (on a coroutine's or a signal handler's
// stack) is not judged and never throws. The tracers keep what they put on the stack per level
// small (Note [Small frames per level] in src/trace/tracer.cpp), so that a trace runs wherever
// the eager forward runs.
#include "symtrace/core/stack_guard.hpp"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <limits>

namespace symtrace::detail {

thread_local std::uintptr_t t_stack_limit __attribute__((tls_model("initial-exec"))) =
    std::numeric_limits<std::uintptr_t>::max();

namespace {

/// This thread's stack: its lowest address and its size (0 until read, or when unreadable).
struct StackBounds {
  std::uintptr_t low = 0;
  std::size_t size = 0;
};
thread_local StackBounds t_stack;

StackBounds read_stack_bounds() noexcept {
  StackBounds bounds;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return bounds;
  void* low = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attr, &low, &size) == 0) bounds = StackBounds{reinterpret_cast<std::uintptr_t>(low), size};
  pthread_attr_destroy(&attr);
  return bounds;
}

}  // namespace

std::size_t stack_reserve(std::size_t stack_size) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  constexpr std::size_t reserve = std::size_t{256} << 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  constexpr std::size_t reserve = std::size_t{256} << 10;
#else
  constexpr std::size_t reserve = std::size_t{64} << 10;
#endif
#else
  constexpr std::size_t reserve = std::size_t{64} << 10;
#endif
  return std::min(reserve, stack_size / 4);
}

bool stack_exhausted() noexcept {
  if (t_stack.size == 0) {
    t_stack = read_stack_bounds();
    t_stack_limit = t_stack.size == 0 ? 0 : t_stack.low + stack_reserve(t_stack.size);
  }
  const auto frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  return frame < t_stack_limit && frame >= t_stack.low;
}

std::string stack_depth_advice() {
  const std::size_t bytes = t_stack.size;
  constexpr std::size_t mib = std::size_t{1} << 20;
  const std::string size = bytes >= mib && bytes % mib == 0 ? fmt::format("{} MiB", bytes / mib)
                           // clang-format off
                           : bytes >= mib ? fmt::format("{:.1f} MiB", static_cast<double>(bytes) / static_cast<double>(mib))
                                          : fmt::format("{} KiB", (bytes + 1023) / 1024);
  // clang-format on
  return fmt::format("the thread's stack ({}) is nearly used up and a deeper call would overflow it; run the model on "
                     "a thread with a larger stack (ulimit -s for the main thread, pthread_attr_setstacksize for "
                     "another) or make it shallower",
                     size);
}

}  // namespace symtrace::detail
