#include "symtrace/nn/module_call_hook.hpp"

namespace symtrace {

namespace {
thread_local ModuleCallHook* current_hook = nullptr;
}  // namespace

ModuleCallHook* current_module_call_hook() noexcept { return current_hook; }

ModuleCallHookScope::ModuleCallHookScope(ModuleCallHook* hook) noexcept : previous_(current_hook) {
  current_hook = hook;
}

ModuleCallHookScope::~ModuleCallHookScope() { current_hook = previous_; }

}  // namespace symtrace
