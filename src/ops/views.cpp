// View ops: reshape and view, flatten, permute, transpose, unsqueeze, squeeze, expand,
// contiguous, slice, narrow and select. Their kernels compute new sizes, strides and a storage
// offset and return `Tensor::view_of(base, ...)`: the result shares storage with its input, so
// an in-place op on it writes through to the base (`x.slice(1, 0, 2).copy_(y)`).
//
// reshape and flatten follow PyTorch: a view when the input's strides allow one (computeStride
// below), otherwise a contiguous copy. Because they may copy they are not flagged OpFlags::view;
// neither is contiguous, which returns its input or a copy.
//
// See Note [Meta before kernel]: the meta functions do all checking and work on unknown dims;
// kernels recompute the (cheap) dim arithmetic on concrete shapes and assume it is valid.

#include "symtrace/ops/shape_ops.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

namespace symtrace {

namespace {

using detail::Strides;
using detail::wrap_dim;
using detail::size_list_text;

// ---- reshape, view, flatten --------------------------------------------------------------

// `shape` with its -1 (at most one) resolved against the input's element count. Sizes may be
// proxies (their expressions, or anonymous dims). With an anonymous count or size, the -1 stays
// anonymous and the sizes are taken as given. Over named dims, the -1 is the count divided by
// the other sizes: exactly when they divide it as polynomials, else a floor division by a
// constant with the guard that it divides (`H*W % 32 == 0`); an equal count is a guard too.
Shape infer_size(const OpCall& call, const std::vector<OpCall::SizeArg>& shape, const Shape& input) {
  IntList text;  // for messages
  for (const OpCall::SizeArg& s : shape) text.push_back(s.value);
  std::optional<std::size_t> inferred;
  std::int64_t product = 1;
  Dim product_dim = 1;
  bool symbolic = false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::int64_t v = shape[i].value;
    if (v == OpCall::unknown_size) {
      symbolic = true;
      product_dim = product_dim * shape[i].dim;
    } else if (v == -1) {
      if (inferred)
        call.fail("only one dimension can be inferred, but shape {} has -1 at {} and {} (input shape {})",
                  size_list_text(text), *inferred, i, input);
      inferred = i;
    } else if (v < 0) {
      call.fail("invalid size {} at dimension {} of shape {}; sizes must be >= 0, or -1 to infer one "
                "(input shape {})",
                v, i, size_list_text(text), input);
    } else {
      product *= v;
      product_dim = product_dim * Dim(v);
    }
  }
  Shape out;
  for (std::size_t i = 0; i < shape.size(); ++i) out.push_back(inferred == i ? Dim() : shape[i].dim);
  const std::optional<std::int64_t> numel = input.numel();
  const Dim numel_dim = input.numel_dim();
  const bool described = !numel_dim.is_anonymous() && !product_dim.is_anonymous();
  if (inferred) {
    if (product == 0 || product_dim == Dim(0))
      call.fail("cannot infer the -1 in shape {} for an input of shape {}: the other sizes multiply to 0, "
                "so any size would do; give every size explicitly",
                size_list_text(text), input);
    if (numel && !symbolic) {
      if (*numel % product != 0)
        call.fail("shape {} is invalid for an input of shape {} ({} elements): {} is not divisible by {}",
                  size_list_text(text), input, *numel, *numel, product);
      out[*inferred] = *numel / product;
      return out;
    }
    if (!described) return out;
    const SymExpr count = *numel_dim.expr(), given = *product_dim.expr();
    detail::require(call, SymFact{given, SymRel::ne, SymExpr(0)},
                    fmt::format("reshaping {} to {}: the -1 needs the other sizes nonzero", input, size_list_text(text)));
    if (const std::optional<SymExpr> q = divide_exactly(count, given)) {
      out[*inferred] = *q;
    } else if (const std::optional<std::int64_t> k = given.constant_value(); k && *k > 0) {
      detail::require(call, SymFact{mod(count, *k), SymRel::eq, SymExpr(0)},
                      fmt::format("reshaping {} to {}", input, size_list_text(text)));
      out[*inferred] = floordiv(count, *k);
    }
    return out;
  }
  if (numel && !symbolic) {
    if (*numel != product)
      call.fail("shape {} is invalid for an input of shape {}: it holds {} elements, the input {}",
                size_list_text(text), input, product, *numel);
  } else if (described) {
    detail::require(call, SymFact{*numel_dim.expr(), SymRel::eq, *product_dim.expr()},
                    fmt::format("reshaping {} to {}", input, out));
  }
  return out;
}

// PyTorch's computeStride: the strides that let a tensor of `old_sizes`/`old_strides` be seen
// as `new_sizes` without moving data, or nullopt when no such strides exist. The old dims are
// cut into chunks that are each contiguous in memory; every new dim must lie within one chunk.
std::optional<Strides> compute_stride(const IntList& old_sizes, const Strides& old_strides,
                                      const IntList& new_sizes) {
  const auto new_rank = static_cast<std::int64_t>(new_sizes.size());
  if (old_sizes.empty()) return Strides(new_sizes.size(), 1);
  std::int64_t numel = 1;
  for (std::int64_t n : old_sizes) numel *= n;
  if (numel == 0) {
    if (old_sizes == new_sizes) return old_strides;
    Strides out(new_sizes.size());  // any strides do: use contiguous ones, as resize would
    for (std::int64_t d = new_rank - 1; d >= 0; --d) {
      const auto i = static_cast<std::size_t>(d);
      out[i] = d == new_rank - 1 ? 1 : std::max<std::int64_t>(new_sizes[i + 1], 1) * out[i + 1];
    }
    return out;
  }
  Strides out(new_sizes.size());
  std::int64_t view_d = new_rank - 1;
  std::int64_t chunk_base_stride = old_strides.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (auto tensor_d = static_cast<std::int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    const auto t = static_cast<std::size_t>(tensor_d);
    tensor_numel *= old_sizes[t];
    const bool chunk_ends =
        tensor_d == 0 || (old_sizes[t - 1] != 1 && old_strides[t - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[static_cast<std::size_t>(view_d)] == 1)) {
      out[static_cast<std::size_t>(view_d)] = view_numel * chunk_base_stride;
      view_numel *= new_sizes[static_cast<std::size_t>(view_d)];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = old_strides[t - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// `x` seen as `shape`: a view when the strides allow it, else a view of a contiguous copy.
Tensor reshape_to(const Tensor& x, const Shape& shape) {
  if (auto strides = compute_stride(x.shape().sizes(), x.strides(), shape.sizes()))
    return Tensor::view_of(x, shape, std::move(*strides), x.storage_offset());
  const Tensor copy = detail::clone(x);
  return Tensor::view_of(copy, shape, detail::contiguous_strides(shape), 0);
}

OutputMeta reshape_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  return OutputMeta::single(x.dtype(), infer_size(call, call.size_args(1), x.shape()));
}

OutputMeta view_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  Shape shape = infer_size(call, call.size_args(1), x.shape());
  // Strides are known only for concrete tensors; a symbolic input is assumed viewable.
  if (x.is_concrete() && shape.is_fully_known() && !compute_stride(x.shape().sizes(), x.strides(), shape.sizes()))
    call.fail("view size is not compatible with input tensor's size and stride: shape {} with strides [{}] "
              "cannot be viewed as {} because a new dimension spans two non-contiguous parts of memory; "
              "use reshape() instead",
              x.shape(), fmt::join(x.strides(), ", "), shape);
  return OutputMeta::single(x.dtype(), std::move(shape));
}

Value reshape_kernel(const OpCall& call, const OutputMeta& meta) {
  return reshape_to(call.tensor(0), meta.outputs[0].shape);
}

OutputMeta flatten_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const Shape& in = x.shape();
  const std::int64_t start = wrap_dim(call, call.integer(1), x.dim(), in);
  const std::int64_t end = wrap_dim(call, call.integer(2), x.dim(), in);
  if (x.dim() == 0) return OutputMeta::single(x.dtype(), Shape{1});
  if (start > end)
    call.fail("start_dim {} comes after end_dim {} for a tensor of shape {}; give start_dim <= end_dim",
              call.integer(1), call.integer(2), in);
  Shape out;
  Dim merged = 1;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const Dim n = in[static_cast<std::size_t>(d)];
    if (d < start || d > end) out.push_back(n);
    else merged = merged * n;
    if (d == end) out.push_back(merged);
  }
  return OutputMeta::single(x.dtype(), std::move(out));
}

// ---- permute, transpose, unsqueeze, squeeze, expand ---------------------------------------

// The wrapped dims of permute(), checked to be a permutation of 0..rank-1.
std::vector<std::size_t> permutation(const OpCall& call, const Tensor& x) {
  const IntList dims = call.int_list(1);
  const std::int64_t rank = x.dim();
  if (static_cast<std::int64_t>(dims.size()) != rank)
    call.fail("dims [{}] must name each of the {} dimensions of shape {} exactly once", fmt::join(dims, ", "),
              rank, x.shape());
  std::vector<std::size_t> out;
  std::vector<bool> seen(dims.size(), false);
  for (std::int64_t d : dims) {
    const auto w = static_cast<std::size_t>(wrap_dim(call, d, rank, x.shape()));
    if (seen[w])
      call.fail("dims [{}] is not a permutation of the dimensions of shape {}: dimension {} appears twice",
                fmt::join(dims, ", "), x.shape(), w);
    seen[w] = true;
    out.push_back(w);
  }
  return out;
}

OutputMeta permute_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  Shape out;
  for (std::size_t d : permutation(call, x)) out.push_back(x.shape()[d]);
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value permute_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  Strides strides;
  for (std::size_t d : permutation(call, x)) strides.push_back(x.strides()[d]);
  return Tensor::view_of(x, meta.outputs[0].shape, std::move(strides), x.storage_offset());
}

OutputMeta transpose_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const auto d0 = static_cast<std::size_t>(wrap_dim(call, call.integer(1), x.dim(), x.shape()));
  const auto d1 = static_cast<std::size_t>(wrap_dim(call, call.integer(2), x.dim(), x.shape()));
  Shape out = x.shape();
  if (x.dim() > 0) std::swap(out[d0], out[d1]);
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value transpose_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  Strides strides = x.strides();
  if (x.dim() > 0) {
    const auto d0 = static_cast<std::size_t>(wrap_dim(call, call.integer(1), x.dim(), x.shape()));
    const auto d1 = static_cast<std::size_t>(wrap_dim(call, call.integer(2), x.dim(), x.shape()));
    std::swap(strides[d0], strides[d1]);
  }
  return Tensor::view_of(x, meta.outputs[0].shape, std::move(strides), x.storage_offset());
}

OutputMeta unsqueeze_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const std::int64_t d = detail::wrap_insert_dim(call, call.integer(1), x.dim(), x.shape());
  Shape out = x.shape();
  out.insert(static_cast<std::size_t>(d), Dim(1));
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value unsqueeze_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const auto d = static_cast<std::size_t>(detail::wrap_insert_dim(call, call.integer(1), x.dim(), x.shape()));
  Strides strides = x.strides();
  // The new dim's stride is arbitrary (its size is 1); PyTorch's choice keeps views contiguous.
  const std::int64_t stride = d < x.shape().rank() ? x.shape()[d].value() * strides[d] : 1;
  strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(d), stride);
  return Tensor::view_of(x, meta.outputs[0].shape, std::move(strides), x.storage_offset());
}

// For squeeze: 1 or 2 (not 1) when a named dim's range decides it, else the dim itself.
Dim is_one(Dim n) {
  if (!n.is_symbolic()) return n;
  const std::optional<bool> one = SymFact{*n.expr(), SymRel::eq, SymExpr(1)}.decide();
  return one ? Dim(*one ? 1 : 2) : n;
}

OutputMeta squeeze_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const Shape& in = x.shape();
  const std::optional<std::int64_t> dim = call.optional_integer(1);
  Shape out;
  if (dim) {
    const std::int64_t d = wrap_dim(call, *dim, x.dim(), in);
    if (x.dim() == 0) return OutputMeta::single(x.dtype(), in);
    const Dim n = is_one(in[static_cast<std::size_t>(d)]);
    if (!n.is_known())
      throw_trace_error(call.where, "{}(): cannot tell whether dimension {} of shape {} is 1 (and so removed) "
                                    "because it is unknown; give example shapes or use reshape() with explicit "
                                    "sizes",
                        call.op.name(), *dim, in);
    out = in;
    if (n.raw() == 1) out.erase(static_cast<std::size_t>(d));
    return OutputMeta::single(x.dtype(), std::move(out));
  }
  for (std::size_t d = 0; d < in.rank(); ++d) {
    if (!is_one(in[d]).is_known())
      throw_trace_error(call.where, "{}(): cannot tell whether dimension {} of shape {} is 1 (and so removed) "
                                    "because it is unknown; give example shapes or squeeze known dims one by one "
                                    "with squeeze(dim)",
                        call.op.name(), d, in);
    if (is_one(in[d]).raw() != 1) out.push_back(in[d]);
  }
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value squeeze_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const std::optional<std::int64_t> dim = call.optional_integer(1);
  const std::int64_t only = dim && x.dim() > 0 ? wrap_dim(call, *dim, x.dim(), x.shape()) : -1;
  Strides strides;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    const bool drop = x.shape()[i].value() == 1 && (!dim || d == only);
    if (!drop) strides.push_back(x.strides()[i]);
  }
  return Tensor::view_of(x, meta.outputs[0].shape, std::move(strides), x.storage_offset());
}

OutputMeta expand_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const Shape& in = x.shape();
  const IntList sizes = call.size_list(1);
  const std::vector<OpCall::SizeArg> dims = call.size_args(1);
  if (sizes.size() < in.rank())
    call.fail("the number of sizes given ({}, {}) must be at least the number of dims of shape {}",
              sizes.size(), size_list_text(sizes), in);
  const std::size_t lead = sizes.size() - in.rank();
  Shape out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::int64_t target = sizes[i];
    const Dim n = i < lead ? Dim(1) : in[i - lead];
    if (target == OpCall::unknown_size) {
      // A proxy size: the existing size if it cannot grow (not 1, which a named dim's range may
      // prove), else the proxy's.
      const bool fixed = (n.is_known() && n.raw() != 1) ||
                         (n.is_symbolic() && SymFact{*n.expr(), SymRel::ne, SymExpr(1)}.decide() == true);
      out.push_back(fixed ? n : dims[i].dim);
      continue;
    }
    if (target < -1)
      call.fail("invalid size {} at position {} of {}; sizes must be >= 0, or -1 to keep a size (shape {})",
                target, i, size_list_text(sizes), in);
    if (i < lead) {
      if (target == -1)
        call.fail("the size -1 at position {} of {} names a new leading dimension, which has no size to keep "
                  "(shape {}); give its size",
                  i, size_list_text(sizes), in);
      out.push_back(target);
      continue;
    }
    if (target == -1) {
      out.push_back(n);
    } else {
      if (n.is_known() && n.raw() != 1 && n.raw() != target)
        call.fail("the expanded size {} must match the existing size {} at non-singleton dimension {}: "
                  "cannot expand shape {} to {}; only size-1 dims can grow",
                  target, n.raw(), i - lead, in,
                  size_list_text(sizes));
      out.push_back(target);
    }
  }
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value expand_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const Shape& out = meta.outputs[0].shape;
  const std::size_t lead = out.rank() - x.shape().rank();
  Strides strides(out.rank(), 0);  // new and stretched dims read the same elements again
  for (std::size_t i = lead; i < out.rank(); ++i)
    if (x.shape()[i - lead] == out[i]) strides[i] = x.strides()[i - lead];
  return Tensor::view_of(x, out, std::move(strides), x.storage_offset());
}

OutputMeta same_meta(const OpCall& call) { return OutputMeta::single(call.tensor(0).dtype(), call.tensor(0).shape()); }

Value contiguous_kernel(const OpCall& call, const OutputMeta&) { return detail::contiguous_copy(call.tensor(0)); }
Value clone_kernel(const OpCall& call, const OutputMeta&) { return detail::clone(call.tensor(0)); }

// ---- slice, narrow, select ---------------------------------------------------------------

// The first index and the length of x[start:end:step] along a dim of `size` (Python rules:
// negative bounds count from the end, out-of-range bounds clamp).
struct SliceRange {
  std::int64_t start = 0;
  std::int64_t length = 0;
};

SliceRange slice_range(std::int64_t size, std::optional<std::int64_t> start_opt, std::optional<std::int64_t> end_opt,
                       std::int64_t step) {
  std::int64_t start = start_opt.value_or(0);
  std::int64_t end = end_opt.value_or(std::numeric_limits<std::int64_t>::max());
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<std::int64_t>(start, 0, size);
  end = std::clamp<std::int64_t>(end, start, size);
  return {start, (end - start + step - 1) / step};
}

// slice_range's length for a size that is an expression: Python's clamping as min and max,
// which the dims' ranges usually fold (`x[:, 1:]` of `[N, H]` is `[N, H - 1]`).
SymExpr symbolic_slice_length(SymExpr size, std::optional<std::int64_t> start_opt, std::optional<std::int64_t> end_opt,
                              std::int64_t step) {
  // Python's clamping, written so that the size appears once where it can (sizes are >= 0): a
  // chain of slices then grows its formula linearly, not exponentially.
  const SymExpr zero(0);
  const std::int64_t s = start_opt.value_or(0);
  SymExpr length;
  if (!end_opt) {
    length = s >= 0 ? max(size - SymExpr(s), zero) : min(SymExpr(-s), size);
  } else if (const std::int64_t e = *end_opt; s >= 0 && e >= 0) {
    length = e > s ? min(SymExpr(e - s), max(size - SymExpr(s), zero)) : zero;
  } else if (s < 0 && e < 0) {
    length = e > s ? min(SymExpr(e - s), max(size + SymExpr(e), zero)) : zero;
  } else if (s >= 0) {  // e < 0
    length = max(size + SymExpr(e - s), zero);
  } else {  // s < 0 <= e
    length = max(min(SymExpr(e), size) - max(size + SymExpr(s), zero), zero);
  }
  return floordiv(length + SymExpr(step - 1), step);
}

std::int64_t slice_dim(const OpCall& call, const Tensor& x) {
  if (x.dim() == 0) call.fail("cannot slice a 0-dim tensor (shape []); unsqueeze() it first");
  return wrap_dim(call, call.integer(1), x.dim(), x.shape());
}

OutputMeta slice_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const auto d = static_cast<std::size_t>(slice_dim(call, x));
  const auto start = call.optional_integer(2);
  const auto end = call.optional_integer(3);
  const std::int64_t step = call.integer(4);
  if (step <= 0) call.fail("step must be positive, got {} (shape {}); flip() is not supported", step, x.shape());
  Shape out = x.shape();
  if (out[d].is_known()) out[d] = slice_range(out[d].raw(), start, end, step).length;
  else if (out[d].is_symbolic()) out[d] = symbolic_slice_length(*out[d].expr(), start, end, step);
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value slice_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const auto d = static_cast<std::size_t>(slice_dim(call, x));
  const std::int64_t step = call.integer(4);
  const SliceRange r = slice_range(x.shape()[d].value(), call.optional_integer(2), call.optional_integer(3), step);
  Strides strides = x.strides();
  const std::int64_t offset = x.storage_offset() + r.start * strides[d];
  strides[d] *= step;
  return Tensor::view_of(x, meta.outputs[0].shape, std::move(strides), offset);
}

OutputMeta narrow_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if (x.dim() == 0) call.fail("cannot narrow a 0-dim tensor (shape []); unsqueeze() it first");
  const std::int64_t d = wrap_dim(call, call.integer(1), x.dim(), x.shape());
  const std::int64_t start = call.integer(2);
  const std::int64_t length = call.integer(3);
  if (length < 0) call.fail("length must be non-negative, got {} (shape {})", length, x.shape());
  Shape out = x.shape();
  const Dim n = out[static_cast<std::size_t>(d)];
  if (n.is_known()) {
    if (start < -n.raw() || start > n.raw())
      call.fail("start {} is out of range for dimension {} of size {} (shape {}); expected {} to {}", start, d,
                n.raw(), x.shape(), -n.raw(), n.raw());
    const std::int64_t first = start < 0 ? start + n.raw() : start;
    if (first + length > n.raw())
      call.fail("start ({}) + length ({}) exceeds the size {} of dimension {} (shape {})", first, length, n.raw(),
                d, x.shape());
  } else if (n.is_symbolic()) {
    const SymExpr end = start < 0 ? *n.expr() : SymExpr(start + length);
    if (start < 0) detail::require(call, SymFact{*n.expr(), SymRel::ge, SymExpr(-start)}, "narrow()'s start must be in range");
    if (start >= 0) detail::require(call, SymFact{end, SymRel::le, *n.expr()}, "narrow()'s start + length must fit the dim");
    else if (length > -start) call.fail("start ({}) + length ({}) exceeds the end of dimension {} (shape {})", start, length, d, x.shape());
  }
  out[static_cast<std::size_t>(d)] = length;
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value narrow_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const auto d = static_cast<std::size_t>(wrap_dim(call, call.integer(1), x.dim(), x.shape()));
  const std::int64_t start = call.integer(2);
  const std::int64_t first = start < 0 ? start + x.shape()[d].value() : start;
  return Tensor::view_of(x, meta.outputs[0].shape, x.strides(), x.storage_offset() + first * x.strides()[d]);
}

OutputMeta select_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if (x.dim() == 0) call.fail("cannot select from a 0-dim tensor (shape []); it has no dimension to index");
  const auto d = static_cast<std::size_t>(wrap_dim(call, call.integer(1), x.dim(), x.shape()));
  const std::int64_t index = call.integer(2);
  const Dim n = x.shape()[d];
  if (n.is_known() && (index < -n.raw() || index >= n.raw()))
    call.fail("index {} is out of range for dimension {} of size {} (shape {}); expected {} to {}", index, d,
              n.raw(), x.shape(), -n.raw(), n.raw() - 1);
  if (n.is_symbolic())
    detail::require(call, SymFact{*n.expr(), index < 0 ? SymRel::ge : SymRel::gt, SymExpr(index < 0 ? -index : index)},
                    fmt::format("index {} must be in range for dimension {}", index, d));
  Shape out = x.shape();
  out.erase(d);
  return OutputMeta::single(x.dtype(), std::move(out));
}

Value select_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const auto d = static_cast<std::size_t>(wrap_dim(call, call.integer(1), x.dim(), x.shape()));
  std::int64_t index = call.integer(2);
  if (index < 0) index += x.shape()[d].value();
  Strides strides = x.strides();
  const std::int64_t offset = x.storage_offset() + index * strides[d];
  strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(d));
  return Tensor::view_of(x, meta.outputs[0].shape, std::move(strides), offset);
}

}  // namespace

void detail::register_view_ops(OpRegistry& r) {
  constexpr OpFlags v = OpFlags::view;
  constexpr OpFlags rs = OpFlags::reshape;
  constexpr OpFlags di = OpFlags::dim_indexing;
  r.add("reshape(Tensor self, int[] shape) -> Tensor", reshape_meta, reshape_kernel, rs);
  r.add("view(Tensor self, int[] size) -> Tensor", view_meta, reshape_kernel, v | rs);
  r.add("flatten(Tensor self, int start_dim=0, int end_dim=-1) -> Tensor", flatten_meta, reshape_kernel, rs);
  r.add("permute(Tensor self, int[] dims) -> Tensor", permute_meta, permute_kernel, v | OpFlags::permutation);
  r.add("transpose(Tensor self, int dim0, int dim1) -> Tensor", transpose_meta, transpose_kernel,
        v | OpFlags::permutation);
  r.add("unsqueeze(Tensor self, int dim) -> Tensor", unsqueeze_meta, unsqueeze_kernel, v | di);
  r.add("squeeze(Tensor self, int? dim=None) -> Tensor", squeeze_meta, squeeze_kernel, v | di);
  r.add("expand(Tensor self, int[] size) -> Tensor", expand_meta, expand_kernel, v | OpFlags::channel_passthrough);
  r.add("contiguous(Tensor self) -> Tensor", same_meta, contiguous_kernel, OpFlags::channel_passthrough);
  // aten's memory_format argument changes nothing here: symtrace's results are contiguous.
  r.add("clone(Tensor self) -> Tensor", same_meta, clone_kernel, OpFlags::channel_passthrough);
  r.add("slice(Tensor self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor", slice_meta,
        slice_kernel, v | di);
  r.add("narrow(Tensor self, int dim, int start, int length) -> Tensor", narrow_meta, narrow_kernel, v | di);
  r.add("select(Tensor self, int dim, int index) -> Tensor", select_meta, select_kernel, v | di);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
using detail::fn;

Tensor reshape(const Tensor& x, const SymIntList& shape, Where w) { return invoke(SYMTRACE_OP("reshape"), w, fn, x, shape); }
Tensor view(const Tensor& x, const SymIntList& shape, Where w) { return invoke(SYMTRACE_OP("view"), w, fn, x, shape); }
Tensor flatten(const Tensor& x, std::int64_t start_dim, std::int64_t end_dim, Where w) {
  return invoke(SYMTRACE_OP("flatten"), w, fn, x, start_dim, end_dim);
}
Tensor permute(const Tensor& x, const IntList& dims, Where w) { return invoke(SYMTRACE_OP("permute"), w, fn, x, dims); }
Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1, Where w) {
  return invoke(SYMTRACE_OP("transpose"), w, fn, x, dim0, dim1);
}
Tensor unsqueeze(const Tensor& x, std::int64_t dim, Where w) { return invoke(SYMTRACE_OP("unsqueeze"), w, fn, x, dim); }
Tensor squeeze(const Tensor& x, std::optional<std::int64_t> dim, Where w) {
  return invoke(SYMTRACE_OP("squeeze"), w, fn, x, dim);
}
Tensor expand(const Tensor& x, const SymIntList& sizes, Where w) { return invoke(SYMTRACE_OP("expand"), w, fn, x, sizes); }
Tensor contiguous(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("contiguous"), w, fn, x); }
Tensor clone(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("clone"), w, fn, x); }
Tensor slice(const Tensor& x, std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
             std::int64_t step, Where w) {
  return invoke(SYMTRACE_OP("slice"), w, fn, x, dim, start, end, step);
}
Tensor narrow(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length, Where w) {
  return invoke(SYMTRACE_OP("narrow"), w, fn, x, dim, start, length);
}
Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index, Where w) {
  return invoke(SYMTRACE_OP("select"), w, fn, x, dim, index);
}

}  // namespace symtrace
