#pragma once
// Readable type names for reports: the demangled class name without namespaces and without
// LibTorch's `Impl` suffix ("symtrace::nn::LinearImpl" -> "Linear").

#include <string>
#include <typeinfo>

namespace symtrace::detail {

/// What symtrace knows of a module type: its readable name and whether it is a built-in layer.
struct TypeFacts {
  const std::type_info* type = nullptr;
  std::string name;
  bool builtin_layer = false;
};

/// The facts of `type`, computed once per type (thread-safe); the reference stays valid.
const TypeFacts& type_facts(const std::type_info& type);

/// The readable name of `type`, computed once per type (thread-safe); the reference stays valid.
const std::string& pretty_type_name(const std::type_info& type);

/// Whether `type` is one of symtrace's built-in layers: declared in `symtrace::nn` and not
/// a container. Computed once per type (thread-safe).
bool is_builtin_layer_type(const std::type_info& type);

/// The same transformation on a demangled name (for tests).
std::string shorten_type_name(std::string demangled);

}  // namespace symtrace::detail
