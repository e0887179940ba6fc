// Reductions (sum, mean, amax, argmax), normalising functions along a dim (softmax,
// log_softmax) and the running sum along a dim (cumsum). See Note [Meta before kernel]: meta functions do all checking (dims, dtypes,
// empty reductions), kernels only compute.
//
// Every reduction kernel views its input as a row-major [outer, inner] matrix whose rows
// are the kept dims and whose columns are the reduced dims (in their original order), then
// reduces each row. The output is contiguous, so its row-major order is the order of the
// kept dims: row r of the matrix is element r of the output, with or without keepdim.

#include "symtrace/ops/reduction.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace symtrace {

namespace {

// ---- Shape rules -------------------------------------------------------------------------

/// The shape left after reducing `reduced` (sorted, wrapped) dims of `shape`.
Shape reduced_shape(const Shape& shape, const std::vector<std::int64_t>& reduced, bool keepdim) {
  Shape out;
  std::size_t next = 0;
  for (std::size_t d = 0; d < shape.rank(); ++d) {
    const bool is_reduced = next < reduced.size() && reduced[next] == static_cast<std::int64_t>(d);
    if (is_reduced) ++next;
    if (!is_reduced) out.push_back(shape[d]);
    else if (keepdim) out.push_back(Dim(1));
  }
  return out;
}

/// Fails when a reduced dim is known to be 0: the op has no identity element (max, argmax).
void require_nonempty_reduction(const OpCall& call, const Shape& shape, const std::vector<std::int64_t>& reduced) {
  for (std::int64_t d : reduced) {
    const Dim size = shape[static_cast<std::size_t>(d)];
    if (size.is_known() && size.raw() == 0)
      call.fail("expected reduction dim {} to have non-zero size, got shape {}: the {} of no elements is "
                "undefined; reduce over other dims or check the input is not empty",
                d, shape, call.op.name() == "amax" ? "maximum" : "argmax");
  }
}

// ---- Kernel building block ---------------------------------------------------------------

/// The input as a contiguous row-major [outer, inner] matrix (see the file comment).
struct Rows {
  Tensor data;
  std::int64_t outer = 1;
  std::int64_t inner = 1;
};

Rows as_rows(const Tensor& x, const std::vector<std::int64_t>& reduced) {
  const IntList sizes = x.shape().sizes();
  const detail::Strides& strides = x.strides();
  std::vector<bool> is_reduced(sizes.size(), false);
  for (std::int64_t d : reduced) is_reduced[static_cast<std::size_t>(d)] = true;
  Rows rows;
  IntList permuted_sizes;
  detail::Strides permuted_strides;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (is_reduced[d]) continue;
    permuted_sizes.push_back(sizes[d]);
    permuted_strides.push_back(strides[d]);
    rows.outer *= sizes[d];
  }
  for (std::int64_t d : reduced) {
    permuted_sizes.push_back(sizes[static_cast<std::size_t>(d)]);
    permuted_strides.push_back(strides[static_cast<std::size_t>(d)]);
    rows.inner *= sizes[static_cast<std::size_t>(d)];
  }
  const Tensor permuted = Tensor::view_of(x, Shape(permuted_sizes), std::move(permuted_strides), x.storage_offset());
  rows.data = detail::contiguous_copy(permuted);
  return rows;
}

// ---- sum, mean, amax ---------------------------------------------------------------------

enum class Reduce {
  sum,
  mean,
  amax
};

template <Reduce R>
OutputMeta reduce_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if constexpr (R == Reduce::mean) {
    if (!is_floating(x.dtype()))
      call.fail("is only defined for floating-point tensors, got {} of shape {}; convert it with .to(float32) first",
                x.dtype(), x.shape());
  }
  const auto reduced = detail::reduction_dims(call, call.int_list(1), x.shape());
  if constexpr (R == Reduce::amax) require_nonempty_reduction(call, x.shape(), reduced);
  const DType dtype = R == Reduce::sum && !is_floating(x.dtype()) ? DType::int64 : x.dtype();
  return OutputMeta::single(dtype, reduced_shape(x.shape(), reduced, call.boolean(2)));
}

// Float sums accumulate in double: a long row summed in float loses digits PyTorch keeps
// (it uses pairwise summation), and the result then rounds once.
template <class T>
using Accumulator = std::conditional_t<std::is_same_v<T, float>, double, T>;

template <Reduce R>
Value reduce_kernel(const OpCall& call, const OutputMeta& meta) {
  const TensorMeta& out_meta = meta.outputs[0];
  const Tensor x = detail::cast(call.tensor(0), out_meta.dtype);  // sum: bool -> int64
  const auto reduced = detail::reduction_dims(call, call.int_list(1), x.shape());
  const Rows rows = as_rows(x, reduced);
  Tensor out = detail::empty_like_meta(out_meta);
  visit_dtype(out_meta.dtype, [&]<class T>() {
    const T* in = rows.data.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (std::int64_t r = 0; r < rows.outer; ++r) {
      const T* row = in + r * rows.inner;
      if constexpr (R == Reduce::amax) {
        T best = row[0];  // the meta function refused empty rows
        for (std::int64_t i = 1; i < rows.inner; ++i) {
          if constexpr (std::is_same_v<T, float>) {
            if (std::isnan(best)) break;  // NaN propagates, as in PyTorch
            if (std::isnan(row[i]) || row[i] > best) best = row[i];
          } else {
            if (row[i] > best) best = row[i];
          }
        }
        o[r] = best;
      } else if constexpr (std::is_same_v<T, bool>) {
        SYMTRACE_ASSERT(false, "sum and mean never compute in bool");
      } else {
        Accumulator<T> acc = 0;
        for (std::int64_t i = 0; i < rows.inner; ++i) acc += row[i];
        if constexpr (R == Reduce::mean)
          o[r] = rows.inner == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(acc / static_cast<double>(rows.inner));
        else
          o[r] = static_cast<T>(acc);
      }
    }
  });
  return out;
}

// ---- argmax ------------------------------------------------------------------------------

/// The reduced dims of argmax: `dim`, or every dim when it is None.
std::vector<std::int64_t> argmax_dims(const OpCall& call, const Shape& shape) {
  const auto dim = call.optional_integer(1);
  if (!dim) return detail::reduction_dims(call, {}, shape);
  const std::int64_t d = detail::wrap_dim(call, *dim, shape.ndim(), shape);
  if (shape.ndim() == 0) return {};
  return {d};
}

OutputMeta argmax_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if (x.dtype() == DType::bool_)
    call.fail("is not defined for bool tensors (shape {}); convert with .to(int64) first", x.shape());
  const auto reduced = argmax_dims(call, x.shape());
  if (!call.optional_integer(1)) {
    const auto numel = x.shape().numel();
    if (numel && *numel == 0)
      call.fail("cannot take the argmax of a tensor with no elements (shape {}): the argmax of an empty tensor is "
                "undefined; pass a dim of non-zero size or check the input is not empty",
                x.shape());
  }
  require_nonempty_reduction(call, x.shape(), reduced);
  // keepdim with dim=None keeps every dim at size 1 (a 0-dim tensor stays 0-dim).
  return OutputMeta::single(DType::int64, reduced_shape(x.shape(), reduced, call.boolean(2)));
}

Value argmax_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const Rows rows = as_rows(x, argmax_dims(call, x.shape()));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  auto* o = out.data_ptr<std::int64_t>();
  visit_dtype(x.dtype(), [&]<class T>() {
    const T* in = rows.data.data_ptr<T>();
    for (std::int64_t r = 0; r < rows.outer; ++r) {
      const T* row = in + r * rows.inner;
      std::int64_t best = 0;  // the first index of the maximum; a NaN is the maximum (PyTorch)
      for (std::int64_t i = 1; i < rows.inner; ++i) {
        if constexpr (std::is_same_v<T, float>) {
          if (std::isnan(row[best])) break;
          if (std::isnan(row[i]) || row[i] > row[best]) best = i;
        } else {
          if (row[i] > row[best]) best = i;
        }
      }
      o[r] = best;
    }
  });
  return out;
}

// ---- softmax, log_softmax ----------------------------------------------------------------

OutputMeta softmax_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if (x.dtype() == DType::bool_)
    call.fail("is not defined for bool tensors (shape {}); convert with .to(float32) first", x.shape());
  detail::wrap_dim(call, call.integer(1), x.dim(), x.shape());
  return OutputMeta::single(DType::float32, x.shape());
}

/// softmax or log_softmax along one dim of a contiguous float tensor seen as [outer, n, stride]:
/// the numerically stable form, exp(x - max) / sum(exp(x - max)).
template <bool Log>
Value softmax_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(detail::cast(call.tensor(0), DType::float32));
  const auto d = static_cast<std::size_t>(detail::wrap_dim(call, call.integer(1), x.dim(), x.shape()));
  const detail::Slices slices = detail::slices_around(x.shape().sizes(), d);
  const std::int64_t outer = slices.outer, n = slices.size, stride = slices.inner;
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  if (n == 0) return out;  // nothing to normalise (and no 1 / 0 to compute)
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (std::int64_t b = 0; b < outer; ++b) {
    for (std::int64_t s = 0; s < stride; ++s) {
      const float* xs = in + b * n * stride + s;
      float* os = o + b * n * stride + s;
      float max = -std::numeric_limits<float>::infinity();
      for (std::int64_t j = 0; j < n; ++j) max = std::isnan(xs[j * stride]) || xs[j * stride] > max ? xs[j * stride] : max;
      double total = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const float e = std::exp(xs[j * stride] - max);
        if constexpr (!Log) os[j * stride] = e;
        total += e;
      }
      if constexpr (Log) {
        const auto log_total = static_cast<float>(std::log(total));
        for (std::int64_t j = 0; j < n; ++j) os[j * stride] = xs[j * stride] - max - log_total;
      } else {
        const auto scale = static_cast<float>(1.0 / total);
        for (std::int64_t j = 0; j < n; ++j) os[j * stride] *= scale;
      }
    }
  }
  return out;
}

// ---- cumsum ------------------------------------------------------------------------------

// cumsum(Tensor self, int dim, *, ScalarType? dtype=None): PyTorch's result dtype, int64 for
// integral and bool input unless `dtype` says otherwise.
DType cumsum_dtype(const OpCall& call) {
  if (!call.arg(2).is_none()) return call.dtype(2);
  return call.tensor(0).dtype() == DType::float32 ? DType::float32 : DType::int64;
}

OutputMeta cumsum_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  detail::wrap_dim(call, call.integer(1), x.dim(), x.shape());
  const DType dtype = cumsum_dtype(call);
  if (dtype == DType::bool_)
    call.unsupported("dtype=bool is not supported (input of shape {}); symtrace sums into int64 or float32",
                     x.shape());
  return OutputMeta::single(dtype, x.shape());
}

/// The running sum along one dim of a contiguous tensor seen as [outer, n, stride], accumulated
/// in double (float) or int64, as PyTorch's CPU kernel.
Value cumsum_kernel(const OpCall& call, const OutputMeta& meta) {
  const DType dtype = meta.outputs[0].dtype;
  const Tensor x = detail::contiguous_copy(detail::cast(call.tensor(0), dtype));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const auto d = static_cast<std::size_t>(detail::wrap_dim(call, call.integer(1), x.dim(), x.shape()));
  const detail::Slices slices = detail::slices_around(x.shape().sizes(), d);
  const std::int64_t outer = slices.outer, n = slices.size, stride = slices.inner;
  if (outer * n * stride == 0) return out;
  const auto run = [&]<class T, class Acc>() {
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (std::int64_t b = 0; b < outer; ++b)
      for (std::int64_t s = 0; s < stride; ++s) {
        Acc total = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const std::int64_t at = (b * n + j) * stride + s;
          total += static_cast<Acc>(in[at]);
          o[at] = static_cast<T>(total);
        }
      }
  };
  if (dtype == DType::float32) run.operator()<float, double>();
  else run.operator()<std::int64_t, std::int64_t>();
  return out;
}

}  // namespace

void detail::register_reduction_ops(OpRegistry& r) {
  constexpr OpFlags red = OpFlags::reduction;
  r.add("sum(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", reduce_meta<Reduce::sum>,
        reduce_kernel<Reduce::sum>, red);
  r.add("mean(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", reduce_meta<Reduce::mean>,
        reduce_kernel<Reduce::mean>, red);
  r.add("amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", reduce_meta<Reduce::amax>,
        reduce_kernel<Reduce::amax>, red);
  r.add("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", argmax_meta, argmax_kernel, red);
  r.add("softmax(Tensor self, int dim) -> Tensor", softmax_meta, softmax_kernel<false>);
  r.add("log_softmax(Tensor self, int dim) -> Tensor", softmax_meta, softmax_kernel<true>);
  r.add("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", cumsum_meta, cumsum_kernel);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
using detail::fn;

Tensor sum(const Tensor& x, const IntList& dims, bool keepdim, Where w) {
  return invoke(SYMTRACE_OP("sum"), w, fn, x, dims, keepdim);
}
Tensor mean(const Tensor& x, const IntList& dims, bool keepdim, Where w) {
  return invoke(SYMTRACE_OP("mean"), w, fn, x, dims, keepdim);
}
Tensor amax(const Tensor& x, const IntList& dims, bool keepdim, Where w) {
  return invoke(SYMTRACE_OP("amax"), w, fn, x, dims, keepdim);
}
Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim, Where w) {
  return invoke(SYMTRACE_OP("argmax"), w, fn, x, dim, keepdim);
}
Tensor softmax(const Tensor& x, std::int64_t dim, Where w) { return invoke(SYMTRACE_OP("softmax"), w, fn, x, dim); }
Tensor log_softmax(const Tensor& x, std::int64_t dim, Where w) {
  return invoke(SYMTRACE_OP("log_softmax"), w, fn, x, dim);
}
Tensor cumsum(const Tensor& x, std::int64_t dim, std::optional<DType> dtype, Where w) {
  return invoke(SYMTRACE_OP("cumsum"), w, fn, x, dim, dtype ? Value(*dtype) : Value());
}

}  // namespace symtrace
