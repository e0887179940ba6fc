#pragma once
/// \file
/// Matrix products: `matmul` with PyTorch's semantics (1-D operands promoted and the added
/// dim removed, batch dims broadcast) and `linear` (y = x W^T + b).
///
/// Schemas: `matmul(Tensor self, Tensor other)`,
/// `linear(Tensor input, Tensor weight, Tensor? bias=None)`.

#include "symtrace/core/tensor.hpp"

#include <source_location>

namespace symtrace {

using Where = std::source_location;

Tensor matmul(const Tensor& a, const Tensor& b, Where where = Where::current());
/// `input` [..., in], `weight` [out, in], `bias` [out] (optional: pass an undefined Tensor).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Where where = Where::current());

}  // namespace symtrace
