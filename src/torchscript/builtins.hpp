#pragma once
// TorchScript's builtins that are not tensor ops of the registry (list, tuple, number, string
// and introspection operations), and the aten ops whose arguments need translating before
// they reach a registry op (`aten::_convolution`, `aten::hardtanh`, `aten::t`, ...).

#include "torchscript/program.hpp"

#include <string_view>

namespace symtrace::torchscript::detail {

/// The builtin for the TorchScript node kind `kind` ("aten::len", "prim::ListConstruct") with
/// schema overload `overload` ("t", "int", "" when none), or nullptr. `tensor_arguments`: the
/// overload takes a tensor (its schema has a Tensor argument), as the registry's ops do.
[[nodiscard]] BuiltinFn find_builtin(std::string_view kind, std::string_view overload,
                                     bool tensor_arguments) noexcept;

/// The registry op an aten op of another name maps onto directly ("bmm" -> "matmul"), or
/// `name` itself.
[[nodiscard]] std::string_view registry_name(std::string_view name) noexcept;

/// True for an aten argument that changes nothing symtrace computes on the CPU
/// (`cudnn_enabled`, `memory_format`, `non_blocking`, ...): dropped whatever its value.
[[nodiscard]] bool is_ignorable_argument(std::string_view name) noexcept;

}  // namespace symtrace::torchscript::detail
