// Ordering ops: topk. Slices along the dim are ordered with a stable sort, so equal values
// keep their order and the result does not depend on the machine.
#include "symtrace/ops/sorting.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace symtrace {

namespace {

// ---- topk ----------------------------------------------------------------------------------

OutputMeta topk_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if (x.dtype() == DType::bool_) call.fail("topk of a bool tensor is not supported; convert it with .to(int64)");
  OutputMeta meta;
  meta.is_list = true;
  if (!x.shape().is_rank_known()) {
    meta.outputs = {TensorMeta{x.dtype(), x.shape()}, TensorMeta{DType::int64, x.shape()}};
    return meta;
  }
  const std::int64_t rank = std::max<std::int64_t>(x.dim(), 1);
  const auto d = static_cast<std::size_t>(detail::wrap_dim(call, call.integer(2), rank, x.shape()));
  Shape out = x.shape();
  const Dim size = x.dim() == 0 ? Dim(1) : x.shape()[d];
  Dim k = Dim::unknown();  // a size the run gives (a proxy SymInt)
  if (!call.arg(1).is_symint()) {
    const std::int64_t kk = call.integer(1);
    if (kk < 0 || (size.is_known() && kk > size.raw()))
      call.fail("k ({}) is out of range for dimension {} of size {} (shape {})", kk, d, size, x.shape());
    k = Dim(kk);
  }
  if (x.dim() > 0) out[d] = k;
  meta.outputs = {TensorMeta{x.dtype(), out}, TensorMeta{DType::int64, std::move(out)}};
  return meta;
}

template <class T>
void topk_slices(const Tensor& x, std::int64_t outer, std::int64_t size, std::int64_t inner, std::int64_t k,
                 bool largest, Tensor& values, Tensor& indices) {
  const T* px = x.data_ptr<T>();
  T* pv = values.data_ptr<T>();
  auto* pi = indices.data_ptr<std::int64_t>();
  std::vector<std::int64_t> order(static_cast<std::size_t>(size));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const T* base = px + o * size * inner + i;
      auto at = [&](std::int64_t j) { return base[j * inner]; };
      // NaN is larger than any number (and than itself, for the order: ties keep order).
      auto before = [&](std::int64_t a, std::int64_t b) {
        const T va = at(a), vb = at(b);
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(va) || std::isnan(vb)) return largest ? std::isnan(va) && !std::isnan(vb) : !std::isnan(va) && std::isnan(vb);
        }
        return largest ? va > vb : va < vb;
      };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), before);
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t at_out = o * k * inner + j * inner + i;
        pv[at_out] = at(order[static_cast<std::size_t>(j)]);
        pi[at_out] = order[static_cast<std::size_t>(j)];
      }
    }
  }
}

Value topk_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  const std::int64_t k = call.arg(1).to_sym_int().value(call.where);
  const std::int64_t rank = std::max<std::int64_t>(x.dim(), 1);
  const auto d = static_cast<std::size_t>(detail::wrap_dim(call, call.integer(2), rank, x.shape()));
  const IntList sizes = x.shape().sizes();
  const std::int64_t size = x.dim() == 0 ? 1 : sizes[d];
  if (k < 0 || k > size) call.fail("k ({}) is out of range for dimension {} of size {} (shape {})", k, d, size, x.shape());
  std::int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i < d) outer *= sizes[i];
    if (i > d) inner *= sizes[i];
  }
  IntList out_sizes = sizes;
  if (x.dim() > 0) out_sizes[d] = k;
  Tensor values = detail::empty_like_meta(TensorMeta{x.dtype(), Shape(out_sizes)});
  Tensor indices = detail::empty_like_meta(TensorMeta{DType::int64, Shape(out_sizes)});
  if (x.dim() == 0) {  // the element itself at index 0, for k = 0 as for k = 1 (as PyTorch)
    detail::copy_into(values, x);
    indices.data_ptr<std::int64_t>()[0] = 0;
    return ValueList{Value(std::move(values)), Value(std::move(indices))};
  }
  const bool largest = call.arg(3).to_bool();
  if (x.dtype() == DType::float32) topk_slices<float>(x, outer, size, inner, k, largest, values, indices);
  else topk_slices<std::int64_t>(x, outer, size, inner, k, largest, values, indices);
  return ValueList{Value(std::move(values)), Value(std::move(indices))};
}

}  // namespace

void detail::register_sorting_ops(OpRegistry& r) {
  r.add("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> Tensor[]", topk_meta,
        topk_kernel);
}

// ---- Typed API ---------------------------------------------------------------------------

std::pair<Tensor, Tensor> topk(const Tensor& x, const SymInt& k, std::int64_t dim, bool largest, bool sorted,
                               Where w) {
  TensorList r = detail::invoke_list(SYMTRACE_OP("topk"), w, CallStyle::function, x, k, dim, largest, sorted);
  return {std::move(r.at(0)), std::move(r.at(1))};
}

}  // namespace symtrace
