#include "ops/kernel_util.hpp"

namespace symtrace::detail {

Tensor empty_like_meta(const TensorMeta& meta) { return Tensor::empty(meta.shape, meta.dtype); }

void copy_into(const Tensor& dst, const Tensor& src_in) {
  Tensor src = src_in;
  if (src.shares_storage_with(dst)) src = detail::clone(src);  // overlapping copies read from a snapshot
  visit_dtype(dst.dtype(), [&]<class D>() {
    visit_dtype(src.dtype(), [&]<class S>() {
      map_unary<D, S>(dst, src, [](S v) { return static_cast<D>(v); });
    });
  });
}

Tensor clone(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), t.dtype());
  visit_dtype(t.dtype(), [&]<class T>() { map_unary<T, T>(out, t, [](T v) { return v; }); });
  return out;
}

Tensor cast(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::empty(t.shape(), dtype);
  copy_into(out, t);
  return out;
}

Tensor contiguous_copy(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = Tensor::empty(t.shape(), t.dtype());
  visit_dtype(t.dtype(), [&]<class T>() { map_unary<T, T>(out, t, [](T v) { return v; }); });
  return out;
}

void check_writable(const OpCall& call, const Tensor& t) {
  const auto& strides = t.strides();
  for (std::size_t d = 0; d < t.shape().rank(); ++d)
    if (strides[d] == 0 && t.shape()[d].raw() > 1)
      call.fail("cannot write in place to a tensor of shape {} whose dim {} repeats one element (an expanded "
                "tensor): more than one element refers to the same memory location; clone it with contiguous() first",
                t.shape(), d);
}

Tensor select_view(const Tensor& t, std::size_t dim, std::int64_t index) {
  Shape shape = t.shape();
  shape.erase(dim);
  Strides strides = t.strides();
  strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(dim));
  return Tensor::view_of(t, shape, std::move(strides), t.storage_offset() + index * t.strides()[dim]);
}

Slices slices_around(const IntList& sizes, std::size_t d) {
  Slices s;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i < d) s.outer *= sizes[i];
    if (i == d) s.size = sizes[i];
    if (i > d) s.inner *= sizes[i];
  }
  return s;
}

Tensor narrow_view(const Tensor& t, std::size_t dim, std::int64_t start, std::int64_t length) {
  Shape shape = t.shape();
  shape[dim] = length;
  return Tensor::view_of(t, shape, t.strides(), t.storage_offset() + start * t.strides()[dim]);
}

Tensor operand_tensor(const Value& v, DType dtype) {
  if (v.is_tensor()) return cast(v.to_tensor(), dtype);
  Tensor out = Tensor::empty(Shape{}, dtype);
  const Scalar s = v.to_scalar();
  visit_dtype(dtype, [&]<class T>() { *out.data_ptr<T>() = s.to<T>(); });
  return out;
}

}  // namespace symtrace::detail
