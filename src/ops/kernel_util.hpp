#pragma once
// Private: building blocks for eager CPU kernels. See Note [Strided runs] in symtrace/core/detail/strided.hpp.

#include "symtrace/core/detail/strided.hpp"
#include "symtrace/ops/op.hpp"

#include <cstdint>

namespace symtrace::detail {

/// Copies `src` into `dst` elementwise, broadcasting `src` to `dst`'s shape and converting
/// dtypes. `dst` may be any strided view. If they overlap, `src` is copied out first.
void copy_into(const Tensor& dst, const Tensor& src);
/// `t` in `dtype` (t itself when it already has it).
Tensor cast(const Tensor& t, DType dtype);
/// `t` if contiguous, else a contiguous copy.
Tensor contiguous_copy(const Tensor& t);
/// A contiguous copy of `t` that shares nothing with it.
Tensor clone(const Tensor& t);
/// A new contiguous tensor with the (fully known) metadata `meta`.
Tensor empty_like_meta(const TensorMeta& meta);
/// A Tensor|Scalar argument as a tensor of `dtype` (0-dim for a Scalar).
Tensor operand_tensor(const Value& v, DType dtype);

/// Fails (OpError) when several elements of concrete `t` share one memory location (a dim of
/// size > 1 with stride 0, as after expand()): an in-place write to it would be ambiguous.
void check_writable(const OpCall& call, const Tensor& t);

/// The extents of contiguous `sizes` around dim `d`: the product of the dims before it, its own
/// size and the product of the dims after it (a 0-dim tensor is one slice of one element).
struct Slices {
  std::int64_t outer = 1, size = 1, inner = 1;
};
Slices slices_around(const IntList& sizes, std::size_t d);

/// Index `index` of concrete `t` along `dim`, that dim removed, as a view.
Tensor select_view(const Tensor& t, std::size_t dim, std::int64_t index);
/// The piece [start, start + length) of concrete `t` along `dim`, as a view.
Tensor narrow_view(const Tensor& t, std::size_t dim, std::int64_t start, std::int64_t length);

/// out[i] = f(a[i]) over broadcast-compatible strided tensors; `out` may be any strided view.
template <class Out, class In, class F>
void map_unary(const Tensor& out, const Tensor& a, F f) {
  const IntList sizes = out.shape().sizes();
  const Strides sa = broadcast_strides(a, sizes);
  const Strides so = out.strides();
  Out* po = base_ptr<Out>(out);
  const In* pa = base_ptr<In>(a);
  for_each_run<2>(sizes, {detail::as_span(so), detail::as_span(sa)},
                  {out.storage_offset(), a.storage_offset()}, [&](auto off, std::int64_t n, auto inner) {
                    Out* o = po + off[0];
                    const In* x = pa + off[1];
                    if (inner[0] == 1 && inner[1] == 1) {
                      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
                    } else {
                      for (std::int64_t i = 0; i < n; ++i) o[i * inner[0]] = f(x[i * inner[1]]);
                    }
                  });
}

/// out[i] = f(a[i], b[i]) with broadcasting; `out` may also be a strided view (in-place ops).
template <class Out, class In, class F>
void map_binary(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const IntList sizes = out.shape().sizes();
  const Strides sa = broadcast_strides(a, sizes);
  const Strides sb = broadcast_strides(b, sizes);
  const Strides so = out.strides();
  Out* po = base_ptr<Out>(out);
  const In* pa = base_ptr<In>(a);
  const In* pb = base_ptr<In>(b);
  for_each_run<3>(sizes,
                  {detail::as_span(so), detail::as_span(sa),
                   detail::as_span(sb)},
                  {out.storage_offset(), a.storage_offset(), b.storage_offset()},
                  [&](auto off, std::int64_t n, auto inner) {
                    Out* o = po + off[0];
                    const In* x = pa + off[1];
                    const In* y = pb + off[2];
                    if (inner[0] == 1 && inner[1] == 1 && inner[2] == 1) {
                      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
                    } else if (inner[0] == 1 && inner[1] == 1 && inner[2] == 0) {
                      const In yv = *y;
                      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
                    } else {
                      for (std::int64_t i = 0; i < n; ++i) o[i * inner[0]] = f(x[i * inner[1]], y[i * inner[2]]);
                    }
                  });
}

}  // namespace symtrace::detail
