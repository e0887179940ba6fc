// Ordering ops: topk, sort, and unique_sorted (aten::_unique2 with sorted=True). NaN orders
// above every number, as in PyTorch's sort.
//
// Note [Ties as LibTorch orders them]: where values are equal, which comes first is the
// algorithm's choice, and models decide on it (a detector's top-k of tied scores, the boxes
// kept in a sort of them). topk and sort make LibTorch's CPU kernels' choice (PyTorch 1.13's
// SortingKernel.cpp): the same standard algorithms (partial_sort when k * 64 <= n, else
// nth_element and a sort of the first k - 1; std::sort, or std::stable_sort when asked) on the
// same (value, index) pairs with the same comparisons, so with the same C++ standard library
// the same indices come out. A stable sort keeps equal values in their order.
#include "symtrace/ops/sorting.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>

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
    if (size.is_symbolic())
      detail::require(call, SymFact{SymExpr(kk), SymRel::le, *size.expr()}, fmt::format("topk(): k must fit dimension {}", d));
    k = Dim(kk);
  }
  if (x.dim() > 0) out[d] = k;
  meta.outputs = {TensorMeta{x.dtype(), out}, TensorMeta{DType::int64, std::move(out)}};
  return meta;
}

// LibTorch's comparisons: NaN above every number; `largest` (descending) or not.
template <class T>
struct Before {
  bool largest;
  bool operator()(const std::pair<T, std::int64_t>& x, const std::pair<T, std::int64_t>& y) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (largest) return (std::isnan(x.first) && !std::isnan(y.first)) || x.first > y.first;
      return (!std::isnan(x.first) && std::isnan(y.first)) || x.first < y.first;
    } else {
      return largest ? x.first > y.first : x.first < y.first;
    }
  }
};

/// How a slice is ordered (Note [Ties as LibTorch orders them]).
enum class Order : std::uint8_t {
  topk,           // LibTorch's topk, sorted
  topk_unsorted,  // and with sorted=False: the k in the order selecting them left
  sort,           // std::sort
  stable_sort,    // std::stable_sort
};

template <class T>
void order_slices(const Tensor& x, std::int64_t outer, std::int64_t size, std::int64_t inner, std::int64_t k,
                  bool largest, Order order, Tensor& values, Tensor& indices) {
  const T* px = x.data_ptr<T>();
  T* pv = values.data_ptr<T>();
  auto* pi = indices.data_ptr<std::int64_t>();
  std::vector<std::pair<T, std::int64_t>> queue(static_cast<std::size_t>(size));
  const Before<T> before{largest};
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const T* base = px + o * size * inner + i;
      for (std::int64_t j = 0; j < size; ++j) queue[static_cast<std::size_t>(j)] = {base[j * inner], j};
      switch (order) {
        case Order::topk:
        case Order::topk_unsorted:
          if (k == 0) break;
          if (k * 64 <= size) {
            std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), before);
          } else {
            std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), before);
            if (order == Order::topk) std::sort(queue.begin(), queue.begin() + k - 1, before);
          }
          break;
        case Order::sort: std::sort(queue.begin(), queue.end(), before); break;
        case Order::stable_sort: std::stable_sort(queue.begin(), queue.end(), before); break;
      }
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t at_out = o * k * inner + j * inner + i;
        pv[at_out] = queue[static_cast<std::size_t>(j)].first;
        pi[at_out] = queue[static_cast<std::size_t>(j)].second;
      }
    }
  }
}

using detail::Slices;
using detail::slices_around;

Value topk_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  const std::int64_t k = call.arg(1).to_sym_int().value(call.where);
  const std::int64_t rank = std::max<std::int64_t>(x.dim(), 1);
  const auto d = static_cast<std::size_t>(detail::wrap_dim(call, call.integer(2), rank, x.shape()));
  const IntList sizes = x.shape().sizes();
  const std::int64_t size = x.dim() == 0 ? 1 : sizes[d];
  if (k < 0 || k > size) call.fail("k ({}) is out of range for dimension {} of size {} (shape {})", k, d, size, x.shape());
  const Slices s = slices_around(sizes, d);
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
  const Order order = call.arg(4).to_bool() ? Order::topk : Order::topk_unsorted;
  if (x.dtype() == DType::float32) order_slices<float>(x, s.outer, size, s.inner, k, largest, order, values, indices);
  else order_slices<std::int64_t>(x, s.outer, size, s.inner, k, largest, order, values, indices);
  return ValueList{Value(std::move(values)), Value(std::move(indices))};
}

// ---- sort ----------------------------------------------------------------------------------

OutputMeta sort_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if (x.shape().is_rank_known())
    (void)detail::wrap_dim(call, call.integer(1), std::max<std::int64_t>(x.dim(), 1), x.shape());
  OutputMeta meta;
  meta.is_list = true;
  meta.outputs = {TensorMeta{x.dtype(), x.shape()}, TensorMeta{DType::int64, x.shape()}};
  return meta;
}

// A sort is a topk of every element: k is the size of the dim.
Value sort_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  const IntList sizes = x.shape().sizes();
  const auto d = static_cast<std::size_t>(
      detail::wrap_dim(call, call.integer(1), std::max<std::int64_t>(x.dim(), 1), x.shape()));
  const Slices s = slices_around(sizes, d);
  Tensor values = detail::empty_like_meta(meta.outputs[0]);
  Tensor indices = detail::empty_like_meta(meta.outputs[1]);
  const bool descending = call.boolean(2);
  const Order order = call.boolean(3) ? Order::stable_sort : Order::sort;
  visit_dtype(x.dtype(), [&]<class T>() {
    order_slices<T>(x, s.outer, s.size, s.inner, s.size, descending, order, values, indices);
  });
  return ValueList{Value(std::move(values)), Value(std::move(indices))};
}

// ---- unique_sorted -------------------------------------------------------------------------

// aten::_unique2(self, sorted=True, return_inverse, return_counts) -> (values, inverse, counts).
// The number of distinct values depends on the data: an unknown dim (Note [Data-dependent
// sizes] in dispatch.cpp), whatever is known of the input, even its rank (OpFlags::unknown_rank).
// As PyTorch 1.13's CPU kernel, the inverse is computed (shaped like self) when either the
// inverse or the counts are asked for; what is not computed is an empty [0] tensor.
OutputMeta unique_sorted_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const bool counts = call.boolean(2);
  const bool inverse = call.boolean(1) || counts;
  OutputMeta meta;
  meta.is_list = true;
  meta.outputs = {TensorMeta{x.dtype(), Shape{Dim::unknown()}},
                  TensorMeta{DType::int64, inverse ? x.shape() : Shape{Dim(0)}},
                  TensorMeta{DType::int64, Shape{counts ? Dim::unknown() : Dim(0)}}};
  return meta;
}

template <class T>
ValueList unique_sorted_of(const Tensor& x, bool inverse, bool counts) {
  const std::vector<T> v = x.to_vector<T>();
  const std::size_t n = v.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v[a]) || std::isnan(v[b])) return !std::isnan(v[a]);  // NaN last
    }
    return v[a] < v[b];
  });
  // Runs of equal values, each represented by its first element in input order (-0.0 or 0.0,
  // whichever comes first, as PyTorch's hash set keeps). NaN equals nothing: each is its own.
  std::vector<std::size_t> firsts;
  std::vector<std::int64_t> run_of(n), count;
  for (const std::size_t i : order) {
    if (firsts.empty() || !(v[i] == v[firsts.back()])) {
      firsts.push_back(i);
      count.push_back(0);
    }
    run_of[i] = static_cast<std::int64_t>(firsts.size() - 1);
    ++count.back();
  }
  const auto u = static_cast<std::int64_t>(firsts.size());
  Tensor values = Tensor::empty(Shape{u}, x.dtype());
  T* pv = values.data_ptr<T>();
  for (std::size_t j = 0; j < firsts.size(); ++j) pv[j] = v[firsts[j]];
  Tensor inv = Tensor::empty(inverse ? x.shape() : Shape{Dim(0)}, DType::int64);
  if (inverse) std::copy(run_of.begin(), run_of.end(), inv.data_ptr<std::int64_t>());
  Tensor cnt = Tensor::empty(Shape{counts ? u : 0}, DType::int64);
  if (counts) std::copy(count.begin(), count.end(), cnt.data_ptr<std::int64_t>());
  return ValueList{Value(std::move(values)), Value(std::move(inv)), Value(std::move(cnt))};
}

Value unique_sorted_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& x = call.tensor(0);
  const bool counts = call.boolean(2);
  const bool inverse = call.boolean(1) || counts;
  ValueList out;
  visit_dtype(x.dtype(), [&]<class T>() { out = unique_sorted_of<T>(x, inverse, counts); });
  return out;
}

}  // namespace

void detail::register_sorting_ops(OpRegistry& r) {
  r.add("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> Tensor[]", topk_meta,
        topk_kernel);
  r.add("sort(Tensor self, int dim=-1, bool descending=False, bool stable=False) -> Tensor[]", sort_meta, sort_kernel);
  r.add("unique_sorted(Tensor self, bool return_inverse=False, bool return_counts=False) -> Tensor[]",
        unique_sorted_meta, unique_sorted_kernel, OpFlags::unknown_rank);
}

// ---- Typed API ---------------------------------------------------------------------------

std::pair<Tensor, Tensor> topk(const Tensor& x, const SymInt& k, std::int64_t dim, bool largest, bool sorted,
                               Where w) {
  TensorList r = detail::invoke_list(SYMTRACE_OP("topk"), w, CallStyle::function, x, k, dim, largest, sorted);
  return {std::move(r.at(0)), std::move(r.at(1))};
}

std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim, bool descending, bool stable, Where w) {
  TensorList r = detail::invoke_list(SYMTRACE_OP("sort"), w, CallStyle::function, x, dim, descending, stable);
  return {std::move(r.at(0)), std::move(r.at(1))};
}

std::tuple<Tensor, Tensor, Tensor> unique_sorted(const Tensor& x, bool return_inverse, bool return_counts, Where w) {
  TensorList r =
      detail::invoke_list(SYMTRACE_OP("unique_sorted"), w, CallStyle::function, x, return_inverse, return_counts);
  return {std::move(r.at(0)), std::move(r.at(1)), std::move(r.at(2))};
}

}  // namespace symtrace
