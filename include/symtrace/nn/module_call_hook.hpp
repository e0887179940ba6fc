#pragma once
/// \file
/// `ModuleCallHook`: the one seam every module call passes (DESIGN decision 4). With no hook
/// installed on the thread, `conv1(x)` runs `forward` directly, with no boxing. With a hook
/// installed (a tracer's `call_module`), the call's arguments are boxed into Values and the
/// hook decides: trace into the module (`module.forward_values(args)`) or record a leaf.
///
/// Hooks are per thread and nest: `ModuleCallHookScope` installs one and restores the
/// previous hook when it ends, also when an exception passes.

#include "symtrace/core/value.hpp"

#include <source_location>

namespace symtrace {

class Module;

/// Intercepts module calls on the thread where it is installed; see the file comment.
class ModuleCallHook {
 public:
  virtual ~ModuleCallHook() = default;
  /// Called for every module call on the thread instead of `module.forward_values(args)`.
  /// `where` is the call site (`conv1(x)` in the parent's forward). The result must have the
  /// kind the module's forward signature declares (a Tensor for a Tensor result, a list of
  /// that many values for a tuple, a list for a vector).
  virtual Value call_module(Module& module, const ValueList& args, std::source_location where) = 0;
};

/// The hook installed on this thread, or nullptr.
[[nodiscard]] ModuleCallHook* current_module_call_hook() noexcept;

/// Installs `hook` on this thread for the scope's lifetime (nullptr installs "no hook").
class ModuleCallHookScope {
 public:
  explicit ModuleCallHookScope(ModuleCallHook* hook) noexcept;
  ~ModuleCallHookScope();
  ModuleCallHookScope(const ModuleCallHookScope&) = delete;
  ModuleCallHookScope& operator=(const ModuleCallHookScope&) = delete;

 private:
  ModuleCallHook* previous_;
};

}  // namespace symtrace
