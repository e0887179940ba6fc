#pragma once
// Internal (symtrace::detail, not part of the API): a per-thread hook told whenever code reads a
// concrete tensor's data as C++ values (`item()`, `to_bool()`, `to_vector()`; not `data_ptr()`, the
// raw access kernels and factories write through). Tracing by execution installs it to warn where a
// trace silently specialises on data (observe/trace_by_execution.cpp). Reading it costs one relaxed
// load of the observer count when no callback is registered: the hook is installed only together
// with an observer callback (Note [Observers off]).

#include "symtrace/observe/has_callbacks.hpp"

#include <source_location>

namespace symtrace::detail {

/// What a data read was.
enum class DataRead : unsigned char { item, to_bool, to_vector };

/// Called with the kind of read and the reader's location.
using DataReadHook = void (*)(DataRead read, std::source_location where);

/// Installs `hook` for this thread; returns the previous one.
DataReadHook set_data_read_hook(DataReadHook hook) noexcept;
/// This thread's hook, or nullptr.
DataReadHook data_read_hook() noexcept;

/// Tells this thread's hook, if any, about a read.
inline void note_data_read(DataRead read, std::source_location where) {
  if (!has_callbacks()) [[likely]]
    return;
  if (DataReadHook hook = data_read_hook()) hook(read, where);
}

}  // namespace symtrace::detail
