// Indexing: index_select gathers slices along a dim by an int64 index tensor; slice_scatter is
// the functional form of slice assignment (`x.slice(d, a, b).copy_(src)` without mutating x),
// which the in-place removal pass rewrites slice assignments into.
//
// index_select's index values are data, so whether they are in range is found by the kernel
// (the only check that cannot live in the meta function; see Note [Meta before kernel]).

#include "symtrace/ops/shape_ops.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <array>
#include <vector>

namespace symtrace {

namespace {

using detail::select_view;

// ---- index_select ------------------------------------------------------------------------

OutputMeta index_select_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const Tensor& index = call.tensor(2);
  if (index.dtype() != DType::int64)
    call.fail("index must be an int64 tensor, got {} of shape {}; convert it with .to(int64)", index.dtype(),
              index.shape());
  if (index.dim() > 1) call.fail("index must be 1-D or 0-dim, got shape {}; flatten() it first", index.shape());
  const std::int64_t d = detail::wrap_dim(call, call.integer(1), x.dim(), x.shape());
  const Dim count = index.dim() == 0 ? Dim(1) : index.shape()[0];
  if (x.dim() == 0) {
    if (count.is_known() && count.raw() != 1)
      call.fail("selecting from a 0-dim tensor needs exactly one index, got an index of shape {}", index.shape());
    return OutputMeta::single(x.dtype(), x.shape());
  }
  Shape out = x.shape();
  out[static_cast<std::size_t>(d)] = count;
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value index_select_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const auto d = static_cast<std::size_t>(detail::wrap_dim(call, call.integer(1), x.dim(), x.shape()));
  const std::vector<std::int64_t> indices = call.tensor(2).to_vector<std::int64_t>();
  const std::int64_t size = x.dim() == 0 ? 1 : x.shape()[d].value();
  for (std::int64_t i : indices)
    if (i < 0 || i >= size)
      call.fail("index {} is out of range for dimension {} of size {} (shape {}); indices must be in [0, {})", i,
                d, size, x.shape(), size);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  if (x.dim() == 0) {
    detail::copy_into(out, x);
    return out;
  }
  for (std::size_t j = 0; j < indices.size(); ++j)
    detail::copy_into(select_view(out, d, static_cast<std::int64_t>(j)), select_view(x, d, indices[j]));
  return out;
}

// ---- slice_scatter -----------------------------------------------------------------------

// slice_scatter(self, src, dim, start, end, step) replaces self[dim: start:end:step]. The slice
// is computed by the slice op's own meta function and kernel, so the two ops cannot disagree on
// Python's slicing rules; they run under slice_scatter's OpDef so errors name slice_scatter().
std::array<Value, 5> slice_args(const OpCall& call, const Tensor& self) {
  return {Value(self), call.arg(2), call.arg(3), call.arg(4), call.arg(5)};
}

const OpDef& slice_op() { return SYMTRACE_OP("slice"); }

OutputMeta slice_scatter_meta(const OpCall& call) {
  const Tensor& self = call.tensor(0);
  const Tensor& src = call.tensor(1);
  const auto args = slice_args(call, self);
  const Shape slice = slice_op().meta(OpCall{call.op, args, call.where, call.style}).outputs[0].shape;
  bool fits = src.shape().rank() == slice.rank();
  for (std::size_t d = 0; fits && d < slice.rank(); ++d)
    fits = !slice[d].is_known() || !src.shape()[d].is_known() || slice[d] == src.shape()[d];
  if (!fits)
    call.fail("src of shape {} must have the shape {} of the slice it replaces (self of shape {}, dim {}, "
              "start {}, end {}, step {})", src.shape(), slice, self.shape(), call.arg(2), call.arg(3),
              call.arg(4), call.arg(5));
  return OutputMeta::single(self.dtype(), self.shape());
}

Value slice_scatter_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor out = detail::clone(call.tensor(0));
  const auto args = slice_args(call, out);
  const OpCall slice_call{call.op, args, call.where, call.style};
  const Tensor slice = slice_op().kernel(slice_call, slice_op().meta(slice_call)).to_tensor();
  detail::copy_into(slice, call.tensor(1));
  return out;
}

}  // namespace

void detail::register_indexing_ops(OpRegistry& r) {
  r.add("index_select(Tensor self, int dim, Tensor index) -> Tensor", index_select_meta, index_select_kernel,
        OpFlags::dim_indexing);
  r.add("slice_scatter(Tensor self, Tensor src, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor",
        slice_scatter_meta, slice_scatter_kernel);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
constexpr CallStyle fn = CallStyle::function;

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index, Where w) {
  return invoke(SYMTRACE_OP("index_select"), w, fn, x, dim, index);
}
Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim, std::optional<std::int64_t> start,
                     std::optional<std::int64_t> end, std::int64_t step, Where w) {
  return invoke(SYMTRACE_OP("slice_scatter"), w, fn, x, src, dim, start, end, step);
}

}  // namespace symtrace
