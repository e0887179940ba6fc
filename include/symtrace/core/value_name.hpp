#pragma once
/// \file
/// Names for the values a model computes, from the model's own variables (the JIT tracer's
/// variable-name lookup): a trace names the node of the next op called on this thread after
/// the name given here (`hidden`, then `hidden_1` if taken) instead of after its op (fx's
/// `relu_2`, the fallback). The TorchScript executor names each op's value after the
/// TorchScript variable it is assigned to (`out.1` gives `out`); a C++ model names a value
/// with a `ValueName` around the call that makes it:
///
///   Tensor hidden;
///   {
///     const symtrace::ValueName name("hidden");
///     hidden = relu(fc1(x));            // the relu node is %hidden (fc1's call_module keeps
///   }                                   // its path's name, as fx names module calls)
///
/// Only the op called in the module whose code gave the name takes it: a module call hides
/// it from the module's own code. Outside a trace a name costs nothing but its scope.

#include "symtrace/core/detail/save_and_restore.hpp"

#include <string_view>

namespace symtrace {

namespace detail {
/// The name the next op node made on this thread takes, or empty. Read and cleared by the
/// tracer when it records an op (one thread-local exchange per node).
constinit inline thread_local std::string_view t_value_name;

/// Hides the current name for the scope's lifetime (a module call: the name is its caller's).
class HideValueName : SaveAndRestore<std::string_view> {
 public:
  HideValueName() noexcept : SaveAndRestore(t_value_name, std::string_view()) {}
};
}  // namespace detail

/// Names the value of the next op called on this thread, in this module's code, for the
/// scope's lifetime (see the file comment). `name` must outlive the scope and be a Python
/// identifier (letters, digits, `_`); an empty name names nothing.
class ValueName : detail::SaveAndRestore<std::string_view> {
 public:
  explicit ValueName(std::string_view name) noexcept : SaveAndRestore(detail::t_value_name, name) {}
};

}  // namespace symtrace
