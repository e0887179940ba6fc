#pragma once
/// \file
/// Pointwise ops: arithmetic, comparisons and bitwise and/or with broadcasting (tensor or
/// scalar operands), rounding, activations, `where`, `clamp`, dtype conversion. Each records
/// `call_function` when traced (the Tensor methods of the same name record `call_method`).
///
/// Broadcasting and type promotion follow PyTorch: shapes align from the right, size-1 dims
/// stretch; bool < int64 < float32, a Scalar only raises the category; `div` is true
/// division (float32); comparisons give bool; transcendental functions of integer tensors
/// give float32.

#include "symtrace/core/tensor.hpp"

#include <optional>
#include <source_location>
#include <string_view>

namespace symtrace {

using Where = std::source_location;

Tensor add(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor add(const Scalar& a, const Tensor& b, Where where = Where::current());
Tensor sub(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor sub(const Scalar& a, const Tensor& b, Where where = Where::current());
Tensor mul(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor mul(const Scalar& a, const Tensor& b, Where where = Where::current());
Tensor div(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor div(const Scalar& a, const Tensor& b, Where where = Where::current());
Tensor pow(const Tensor& a, const Operand& exponent, Where where = Where::current());
Tensor pow(const Scalar& a, const Tensor& exponent, Where where = Where::current());

Tensor eq(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor ne(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor lt(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor le(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor gt(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor ge(const Tensor& a, const Operand& b, Where where = Where::current());

/// Bitwise and/or of int64 operands, logical and/or of bool ones (`a & b`, `a | b`; TorchScript's
/// `aten::__and__` and `aten::__or__`); the result type follows promotion. Floating operands are
/// refused, as in PyTorch.
Tensor bitwise_and(const Tensor& a, const Operand& b, Where where = Where::current());
Tensor bitwise_or(const Tensor& a, const Operand& b, Where where = Where::current());

Tensor neg(const Tensor& x, Where where = Where::current());
Tensor abs(const Tensor& x, Where where = Where::current());
/// Rounding down, up, and to the nearest integer with halves to even (`round(2.5)` is 2, as
/// `torch.round`). An int64 tensor is returned unchanged in value and dtype; bool is refused.
Tensor floor(const Tensor& x, Where where = Where::current());
Tensor ceil(const Tensor& x, Where where = Where::current());
Tensor round(const Tensor& x, Where where = Where::current());
Tensor exp(const Tensor& x, Where where = Where::current());
Tensor log(const Tensor& x, Where where = Where::current());
Tensor log2(const Tensor& x, Where where = Where::current());
/// 1 / x (float32 for integer and bool inputs, as PyTorch: `reciprocal(0)` is inf).
Tensor reciprocal(const Tensor& x, Where where = Where::current());
Tensor atan(const Tensor& x, Where where = Where::current());
Tensor sqrt(const Tensor& x, Where where = Where::current());
Tensor rsqrt(const Tensor& x, Where where = Where::current());
Tensor relu(const Tensor& x, Where where = Where::current());
/// min(max(x, 0), 6).
Tensor relu6(const Tensor& x, Where where = Where::current());
/// x * sigmoid(x).
Tensor silu(const Tensor& x, Where where = Where::current());
/// relu6(x + 3) / 6, as PyTorch's `hardsigmoid`: 0 below -3, 1 above 3, linear between.
Tensor hardsigmoid(const Tensor& x, Where where = Where::current());
/// x * hardsigmoid(x), as PyTorch's `hardswish` (MobileNetV3's activation).
Tensor hardswish(const Tensor& x, Where where = Where::current());
/// GELU; `approximate` is "none" (erf) or "tanh".
Tensor gelu(const Tensor& x, std::string_view approximate = "none", Where where = Where::current());
Tensor sigmoid(const Tensor& x, Where where = Where::current());
Tensor tanh(const Tensor& x, Where where = Where::current());
/// Limits x to [min, max]; either bound may be omitted (not both).
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max,
             Where where = Where::current());
/// Elementwise `condition ? a : b` (condition is a bool tensor); shapes broadcast.
Tensor where(const Tensor& condition, const Operand& a, const Operand& b, Where where = Where::current());
/// `x` converted to `dtype` (x itself when it already has it, as in PyTorch).
Tensor to(const Tensor& x, DType dtype, Where where = Where::current());

}  // namespace symtrace
