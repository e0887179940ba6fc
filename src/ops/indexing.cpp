// Indexing: index_select gathers slices along a dim by an int64 index tensor; slice_scatter is
// the functional form of slice assignment (`x.slice(d, a, b).copy_(src)` without mutating x),
// which the in-place removal pass rewrites slice assignments into; index and index_put_ are
// PyTorch's advanced indexing (`x[i, :, j]`, `x[mask] = v`), and nonzero lists the
// coordinates of the nonzero elements.
//
// Index values are data, so whether they are in range is found by the kernel (the only check
// that cannot live in the meta function; see Note [Meta before kernel]).

#include "symtrace/ops/shape_ops.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include "symtrace/core/factories.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <utility>
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
              "start {}, end {}, step {})",
              src.shape(), slice, self.shape(), call.arg(2), call.arg(3),
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

// ---- index, index_put_, nonzero ---------------------------------------------------------

// Note [Advanced indexing]: `self[indices]` with a list of optional index tensors follows
// PyTorch's aten::index (make_info in ATen/native/TensorAdvancedIndexing.cpp). Each entry
// indexes the next dims of self: None takes a whole dim, an int64 tensor picks along one dim
// (negative values count from the end), and a bool mask stands for the columns of its
// nonzero(), one per dim it covers (its shape must be those dims' sizes). Dims past the list
// are taken whole. The index tensors broadcast together to one shape B. When the indexed dims
// are adjacent, B replaces them in place (`x[:, i, j]` of [A, N, M, C] is [A, B..., C]); when a
// dim taken whole separates them, B goes first (`x[i, :, j]` of [N, A, M] is [B..., A]). How
// many elements a mask selects is data: an unknown dim in the meta function, even for a
// concrete mask (Note [Data-dependent sizes]).

/// A tensor entry of an index list and the first dim of self it indexes.
struct IndexEntry {
  const Tensor* tensor;
  std::size_t dim;
};

bool is_mask(const Tensor& index) { return index.dtype() == DType::bool_; }

/// How many dims of self an index tensor covers: a mask, one per dim of its own.
std::size_t dims_covered(const Tensor& index) { return is_mask(index) ? index.shape().rank() : 1; }

/// The tensor entries of the index list (argument 1), checked against self.
std::vector<IndexEntry> index_entries(const OpCall& call, const Tensor& self) {
  const ValueList& list = call.arg(1).to_list();
  std::size_t covered = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].is_none()) {
      ++covered;
      continue;
    }
    const Tensor& t = list[i].to_tensor();
    if (t.dtype() != DType::int64 && !is_mask(t))
      call.fail("indices must be int64 or bool tensors, but index {} is {} of shape {}; convert it with .to(int64)",
                i, t.dtype(), t.shape());
    if (is_mask(t) && t.dim() == 0)
      call.fail("index {} is a 0-dim bool tensor, which covers no dim of self (shape {}); give the mask the shape "
                "of the dims it selects from, or use where()",
                i, self.shape());
    covered += dims_covered(t);
  }
  if (covered > self.shape().rank())
    call.fail("too many indices for a tensor of shape {}: the {} entries cover {} dims (None and an int64 tensor "
              "cover one dim each, a bool mask one per dim of its own)",
              self.shape(), list.size(), covered);
  std::vector<IndexEntry> entries;
  std::size_t d = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].is_none()) {
      ++d;
      continue;
    }
    const Tensor& t = list[i].to_tensor();
    for (std::size_t j = 0; is_mask(t) && j < t.shape().rank(); ++j) {
      const Dim m = t.shape()[j], s = self.shape()[d + j];
      if (m.is_known() && s.is_known() && m != s)
        call.fail("the bool mask of shape {} (index {}) does not match the shape {} of the tensor it indexes: "
                  "its dim {} is {} where dim {} of the tensor is {}",
                  t.shape(), i, self.shape(), j, m, d + j, s);
    }
    entries.push_back(IndexEntry{&t, d});
    d += dims_covered(t);
  }
  if (entries.empty())
    call.fail("needs at least one index tensor, but {}; indexing with None alone gives the tensor itself",
              list.empty() ? std::string("the index list is empty")
                           : fmt::format("its {} entries are all None", list.size()));
  return entries;
}

/// Where self's dims taken whole go in the result: before B or after it (Note [Advanced
/// indexing]), in the order they have in self.
struct Placement {
  std::vector<std::size_t> before;
  std::vector<std::size_t> after;
};

Placement placement(const std::vector<bool>& indexed) {
  std::size_t first = indexed.size(), last = 0;
  for (std::size_t d = 0; d < indexed.size(); ++d) {
    if (!indexed[d]) continue;
    first = std::min(first, d);
    last = d;
  }
  bool adjacent = true;
  for (std::size_t d = first; d < last; ++d) adjacent = adjacent && indexed[d];
  Placement p;
  for (std::size_t d = 0; d < indexed.size(); ++d)
    if (!indexed[d]) (adjacent && d < first ? p.before : p.after).push_back(d);
  return p;
}

Shape result_shape(const Shape& self, const Placement& p, const Shape& b) {
  Shape out;
  for (std::size_t d : p.before) out.push_back(self[d]);
  for (std::size_t i = 0; i < b.rank(); ++i) out.push_back(b[i]);
  for (std::size_t d : p.after) out.push_back(self[d]);
  return out;
}

/// The shape of `self[indices]` from metadata alone.
Shape index_meta_shape(const OpCall& call, const Tensor& self) {
  std::vector<bool> indexed(self.shape().rank(), false);
  Shape b;
  for (const IndexEntry& e : index_entries(call, self)) {
    for (std::size_t j = 0; j < dims_covered(*e.tensor); ++j) indexed[e.dim + j] = true;
    // A mask stands for its nonzero() columns, [count]: a count only the run knows.
    b = detail::broadcast_shapes(call, b, is_mask(*e.tensor) ? Shape{Dim::unknown()} : e.tensor->shape());
  }
  return result_shape(self.shape(), placement(indexed), b);
}

/// The coordinates of the nonzero elements of concrete `x` in row-major order (x.dim() per
/// element), and how many there are.
std::pair<std::int64_t, std::vector<std::int64_t>> nonzero_coords(const Tensor& x) {
  const IntList sizes = x.shape().sizes();
  std::vector<std::int64_t> coords;
  std::int64_t count = 0;
  IntList at(sizes.size(), 0);
  visit_dtype(x.dtype(), [&]<class T>() {
    const std::vector<T> values = x.to_vector<T>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] != T(0)) {  // NaN is nonzero, -0.0 is zero
        ++count;
        coords.insert(coords.end(), at.begin(), at.end());
      }
      for (std::size_t d = sizes.size(); d-- > 0;) {
        if (++at[d] < sizes[d]) break;
        at[d] = 0;
      }
    }
  });
  return {count, std::move(coords)};
}

/// The index values of concrete tensors: per indexed dim of self, its values broadcast to B
/// (row-major) and wrapped into [0, size).
struct ConcreteIndices {
  std::vector<std::pair<std::size_t, std::vector<std::int64_t>>> values;
  Shape shape;  ///< B
  Placement placement;
};

ConcreteIndices concrete_indices(const OpCall& call, const Tensor& self) {
  const IntList sizes = self.shape().sizes();
  // The index tensor of each indexed dim: an int64 tensor, or a column of a mask's nonzero().
  std::vector<std::pair<std::size_t, Tensor>> columns;
  for (const IndexEntry& e : index_entries(call, self)) {
    if (!is_mask(*e.tensor)) {
      columns.emplace_back(e.dim, *e.tensor);
      continue;
    }
    const auto [count, coords] = nonzero_coords(*e.tensor);
    const std::size_t r = e.tensor->shape().rank();
    for (std::size_t j = 0; j < r; ++j) {
      std::vector<std::int64_t> column(static_cast<std::size_t>(count));
      for (std::size_t k = 0; k < column.size(); ++k) column[k] = coords[k * r + j];
      columns.emplace_back(e.dim + j, detail::from_ints(column, {count}, call.where));
    }
  }
  ConcreteIndices out;
  for (const auto& [d, t] : columns) out.shape = detail::broadcast_shapes(call, out.shape, t.shape());
  std::vector<bool> indexed(sizes.size(), false);
  for (const auto& [d, t] : columns) {
    indexed[d] = true;
    const Tensor expanded = Tensor::empty(out.shape, DType::int64);
    detail::copy_into(expanded, t);
    std::vector<std::int64_t> v = expanded.to_vector<std::int64_t>();
    const std::int64_t size = sizes[d];
    for (std::int64_t& i : v) {
      if (i < -size || i >= size)
        call.fail("index {} is out of range for dimension {} of size {} (shape {}); indices must be in [{}, {})", i,
                  d, size, self.shape(), -size, size);
      if (i < 0) i += size;
    }
    out.values.emplace_back(d, std::move(v));
  }
  out.placement = placement(indexed);
  return out;
}

/// The storage offsets that dims `dims` of `t` add, over their index space in row-major order.
std::vector<std::int64_t> dim_offsets(const Tensor& t, const std::vector<std::size_t>& dims) {
  std::vector<std::int64_t> out{0};
  for (std::size_t d : dims) {
    const std::int64_t size = t.shape()[d].value(), stride = t.strides()[d];
    std::vector<std::int64_t> next;
    next.reserve(out.size() * static_cast<std::size_t>(size));
    for (std::int64_t o : out)
      for (std::int64_t i = 0; i < size; ++i) next.push_back(o + i * stride);
    out = std::move(next);
  }
  return out;
}

/// Calls `f(offset, k)` for element k of `self[indices]` (row-major), `offset` being where in
/// self's storage it is.
template <class F>
void for_each_indexed(const Tensor& self, const ConcreteIndices& ix, F f) {
  const std::vector<std::int64_t> before = dim_offsets(self, ix.placement.before);
  const std::vector<std::int64_t> after = dim_offsets(self, ix.placement.after);
  std::int64_t count = 1;
  for (std::size_t i = 0; i < ix.shape.rank(); ++i) count *= ix.shape[i].value();
  std::vector<std::int64_t> middle(static_cast<std::size_t>(count), self.storage_offset());
  for (const auto& [d, v] : ix.values) {
    const std::int64_t stride = self.strides()[d];
    for (std::size_t b = 0; b < middle.size(); ++b) middle[b] += v[b] * stride;
  }
  std::size_t k = 0;
  for (std::int64_t p : before)
    for (std::int64_t m : middle)
      for (std::int64_t q : after) f(p + m + q, k++);
}

OutputMeta index_meta(const OpCall& call) {
  const Tensor& self = call.tensor(0);
  return OutputMeta::single(self.dtype(), index_meta_shape(call, self));
}

Value index_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& self = call.tensor(0);
  const ConcreteIndices ix = concrete_indices(call, self);
  Tensor out = Tensor::empty(result_shape(self.shape(), ix.placement, ix.shape), self.dtype());
  visit_dtype(self.dtype(), [&]<class T>() {
    const T* src = detail::base_ptr<T>(self);
    T* dst = out.data_ptr<T>();
    for_each_indexed(self, ix, [&](std::int64_t at, std::size_t k) { dst[k] = src[at]; });
  });
  return out;
}

/// Fails unless `values` broadcasts to the indexed result `result` (unknown dims may).
void check_values_fit(const OpCall& call, const Shape& values, const Shape& result) {
  bool fits = values.rank() <= result.rank();
  for (std::size_t i = 0; fits && i < values.rank(); ++i) {
    const Dim v = values[i], r = result[result.rank() - values.rank() + i];
    fits = !v.is_known() || !r.is_known() || v.raw() == 1 || v == r;
  }
  if (!fits) call.fail("values of shape {} cannot be broadcast to the indexed result of shape {}", values, result);
}

OutputMeta index_put_meta(const OpCall& call) {
  const Tensor& self = call.tensor(0);
  const Tensor& values = call.tensor(2);
  if (values.dtype() != self.dtype())
    call.fail("values must have the dtype of self ({}), got {} of shape {}; convert them with .to({})", self.dtype(),
              values.dtype(), values.shape(), self.dtype());
  check_values_fit(call, values.shape(), index_meta_shape(call, self));
  return OutputMeta::single(self.dtype(), self.shape());
}

/// Writes the values at the indices of `self` (the call's tensor 0, or a copy of it).
void index_put_into(const OpCall& call, const Tensor& self) {
  const ConcreteIndices ix = concrete_indices(call, self);  // read before anything is written
  const Shape result = result_shape(self.shape(), ix.placement, ix.shape);
  check_values_fit(call, call.tensor(2).shape(), result);
  // The values broadcast to the result, copied first: they may share storage with self.
  const Tensor values = Tensor::empty(result, self.dtype());
  detail::copy_into(values, call.tensor(2));
  const bool accumulate = call.boolean(3);
  visit_dtype(self.dtype(), [&]<class T>() {
    T* dst = detail::base_ptr<T>(self);
    const T* src = values.data_ptr<T>();
    // In order: with repeated indices and accumulate=False the last value stays (as PyTorch's
    // CPU kernel on small tensors); with accumulate=True they add up (bool: or).
    for_each_indexed(self, ix, [&](std::int64_t at, std::size_t k) {
      if (!accumulate) dst[at] = src[k];
      else if constexpr (std::is_same_v<T, bool>) dst[at] = dst[at] || src[k];
      else dst[at] += src[k];
    });
  });
}

Value index_put_inplace_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& self = call.tensor(0);
  detail::check_writable(call, self);
  index_put_into(call, self);
  return self;
}

Value index_put_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& self = call.tensor(0);
  const Tensor out = Tensor::empty(self.shape(), self.dtype());
  detail::copy_into(out, self);
  index_put_into(call, out);
  return out;
}

OutputMeta nonzero_meta(const OpCall& call) {
  const Shape& s = call.tensor(0).shape();
  // How many elements are nonzero is data: an unknown dim even for a concrete tensor.
  const Dim rank = s.is_rank_known() ? Dim(static_cast<std::int64_t>(s.rank())) : Dim::unknown();
  return OutputMeta::single(DType::int64, Shape{Dim::unknown(), rank});
}

Value nonzero_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& x = call.tensor(0);
  const auto [count, coords] = nonzero_coords(x);
  return detail::from_ints(coords, {count, x.dim()}, call.where);
}

}  // namespace

void detail::register_indexing_ops(OpRegistry& r) {
  r.add("index_select(Tensor self, int dim, Tensor index) -> Tensor", index_select_meta, index_select_kernel,
        OpFlags::dim_indexing);
  r.add("slice_scatter(Tensor self, Tensor src, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor",
        slice_scatter_meta, slice_scatter_kernel);
  r.add("index(Tensor self, Tensor?[] indices) -> Tensor", index_meta, index_kernel);
  r.add("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor", index_put_meta,
        index_put_kernel);
  r.add("index_put_(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor", index_put_meta,
        index_put_inplace_kernel, OpFlags::inplace);
  r.add("nonzero(Tensor self) -> Tensor", nonzero_meta, nonzero_kernel, OpFlags::unknown_rank);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
using detail::fn;

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index, Where w) {
  return invoke(SYMTRACE_OP("index_select"), w, fn, x, dim, index);
}
Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim, std::optional<std::int64_t> start,
                     std::optional<std::int64_t> end, std::int64_t step, Where w) {
  return invoke(SYMTRACE_OP("slice_scatter"), w, fn, x, src, dim, start, end, step);
}

namespace {
/// A `Tensor?[]` argument: an undefined tensor stands for None.
ValueList optional_tensors(const TensorList& tensors) {
  ValueList out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(detail::optional_tensor_value(t));
  return out;
}
}  // namespace

Tensor index(const Tensor& x, const TensorList& indices, Where w) {
  return invoke(SYMTRACE_OP("index"), w, fn, x, optional_tensors(indices));
}
Tensor index_put_(const Tensor& x, const TensorList& indices, const Tensor& values, bool accumulate, Where w) {
  return invoke(SYMTRACE_OP("index_put_"), w, fn, x, optional_tensors(indices), values, accumulate);
}
Tensor nonzero(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("nonzero"), w, fn, x); }

}  // namespace symtrace
