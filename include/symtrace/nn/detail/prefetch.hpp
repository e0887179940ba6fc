#pragma once
/// \file
/// `detail::prefetch_for_call`: a cache hint for code that walks a model's modules (the
/// tracer), kept out of `Module`'s public interface.

namespace symtrace {
class Module;
namespace detail {
/// Starts loading, without waiting, the lists a call of `module` reads first (its children
/// and parameters); changes nothing. For code that walks a model too large for the cache,
/// where each module and each list lies in memory of its own (Note [Paths of called modules]).
void prefetch_for_call(const Module& module) noexcept;
}  // namespace detail
}  // namespace symtrace
