#pragma once
// Internal (symtrace::detail, not part of the API): the size of a pooled dim, shared by the pooling
// ops' meta function and the pooling layers' output metadata (Note [Layer output metadata]).

#include "symtrace/core/shape.hpp"

#include <cstdint>

namespace symtrace::detail {

/// PyTorch's pooling_output_shape: floor((in + 2p - d*(k-1) - 1 [+ s-1 in ceil mode]) / s) + 1,
/// where in ceil mode the last window must start inside the input or its left padding. May
/// return a size < 1; callers refuse those.
inline std::int64_t pooled_size(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                                std::int64_t dilation, bool ceil_mode) noexcept {
  const auto floor_div = [](std::int64_t a, std::int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); };
  const std::int64_t span = dilation * (kernel - 1) + 1;
  std::int64_t out = floor_div(in + 2 * padding - span + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + padding) --out;
  return out;
}

/// The same for a dim that may be an expression over named dims: the expression, or an
/// anonymous dim when the ceil-mode correction depends on the sizes in a way their ranges do
/// not decide. May be an expression that is < 1 for some sizes; callers require it to be >= 1.
inline Dim pooled_dim(Dim in, std::int64_t kernel, std::int64_t stride, std::int64_t padding, std::int64_t dilation,
                      bool ceil_mode) {
  if (in.is_known()) return pooled_size(in.raw(), kernel, stride, padding, dilation, ceil_mode);
  if (in.is_anonymous()) return Dim();
  const std::int64_t span = dilation * (kernel - 1) + 1;
  const SymExpr x = *in.expr();
  SymExpr out = floordiv(x + SymExpr(2 * padding - span + (ceil_mode ? stride - 1 : 0)), stride) + SymExpr(1);
  // In ceil mode the last window must start inside the input or its left padding. It always
  // does when p + s - 1 < span: (out - 1)*s <= in + 2p - span + s - 1 < in + p.
  if (ceil_mode && padding + stride - 1 >= span) {
    const std::optional<bool> last_outside = SymFact{(out - SymExpr(1)) * SymExpr(stride), SymRel::ge, x + SymExpr(padding)}.decide();
    if (!last_outside) return Dim();
    if (*last_outside) out = out - SymExpr(1);
  }
  return out;
}

}  // namespace symtrace::detail
