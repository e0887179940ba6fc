#pragma once
/// \file
/// Matrix products: `matmul` with PyTorch's semantics (1-D operands promoted and the added
/// dim removed, batch dims broadcast), `linear` (y = x W^T + b) and `einsum` (PyTorch's
/// equations: letters, an ellipsis per operand, implicit or explicit output).
///
/// Schemas: `matmul(Tensor self, Tensor other)`,
/// `linear(Tensor input, Tensor weight, Tensor? bias=None)`,
/// `einsum(str equation, Tensor[] tensors, *, int[]? path=None)` (float32 operands; `path`, a
/// contraction order, changes nothing computed and is ignored).

#include "symtrace/core/sym_expr.hpp"
#include "symtrace/core/tensor.hpp"

#include <optional>
#include <source_location>
#include <string_view>
#include <vector>

namespace symtrace {

using Where = std::source_location;

Tensor matmul(const Tensor& a, const Tensor& b, Where where = Where::current());
/// `input` [..., in], `weight` [out, in], `bias` [out] (optional: pass an undefined Tensor).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Where where = Where::current());
/// `torch.einsum(equation, operands)`: `einsum("bij,bjk->bik", {a, b})` is a batched matmul,
/// `einsum("ii", {a})` a trace, `einsum("...ij->...ji", {a})` a transpose.
Tensor einsum(std::string_view equation, const TensorList& operands, Where where = Where::current());
/// The multiply-adds of einsum(`equation`) on operands of `shapes` by its definition: the
/// product of the sizes of all its subscripts (the ellipsis's dims included). nullopt when the
/// equation does not fit the shapes, or a size is anonymous.
[[nodiscard]] std::optional<SymExpr> einsum_macs(std::string_view equation, const std::vector<Shape>& shapes);

}  // namespace symtrace
