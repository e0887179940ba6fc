#pragma once
// LibTorch's operators as symtrace ops (docs/design.md, decision 14). An operator a TorchScript
// file calls that symtrace has no op of its own for (`aten::einsum`, `aten::cumsum`,
// torchvision's `torchvision::deform_conv2d`) becomes a registry op named by the operator's
// qualified name and overload (`aten::add.Tensor`) whose kernel runs LibTorch's operator on
// the symtrace tensors' own memory, and whose meta function asks LibTorch for the result's
// sizes and dtype. Being a registry op, it is recorded by traces as a `call_function` node,
// run by the interpreter by its name, and read back from graph JSON like any other.
//
// Only src/torchscript/ includes this header (LibTorch's headers).

#include "symtrace/ops/op.hpp"

#include <ATen/core/function_schema.h>

#include <source_location>
#include <string_view>

namespace torch::jit {
struct Function;
}  // namespace torch::jit

namespace symtrace::torchscript::detail {

/// The registry op that runs LibTorch's operator of `schema`, made and registered on first
/// use (thread-safe; later calls return the same op). Throws std::invalid_argument saying why
/// when symtrace cannot call it: an argument or a result of a type symtrace has no value for
/// (a tuple of numbers, a quantized tensor's scale), or no operator of that schema in LibTorch.
const OpDef& aten_op(const c10::FunctionSchema& schema);

/// The registry's resolver (OpRegistry::set_resolver): the op of LibTorch's operator called
/// `name` (`aten::einsum`, `aten::add.Tensor`), or nullptr when LibTorch has none or symtrace
/// cannot call it.
const OpDef* resolve_aten_op(std::string_view name) noexcept;

/// Runs `method`, a method of a class registered with LibTorch (torch::class_), in LibTorch on
/// `args` (the object first) and returns its result as symtrace values. Throws TraceError at
/// `where` for a symbolic argument (LibTorch's code cannot be recorded), and OpError naming the
/// method for what LibTorch refuses.
Value run_class_method(torch::jit::Function& method, std::string_view name, const ValueList& args,
                       std::source_location where);

}  // namespace symtrace::torchscript::detail
