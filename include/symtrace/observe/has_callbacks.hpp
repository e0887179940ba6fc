#pragma once
/// \file
/// The one question every op call and module call asks the observer registry
/// (record_function.hpp): is any callback registered? Kept apart so that the module base can
/// ask it without including the registry.

#include <atomic>
#include <cstdint>

namespace symtrace {

namespace detail {
/// Note [Observers off]: the number of callbacks registered anywhere (global ones and every
/// thread's thread-local ones). An event reads it once, relaxed; zero means nothing to do, so
/// with no callback an op call or module call pays one load and a branch.
inline std::atomic<std::uint32_t> g_observer_count{0};
}  // namespace detail

/// True when some callback is registered somewhere (it may be another thread's).
[[nodiscard]] inline bool has_callbacks() noexcept {
  return detail::g_observer_count.load(std::memory_order_relaxed) != 0;
}

}  // namespace symtrace
