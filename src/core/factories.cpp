#include "symtrace/core/factories.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace symtrace {

namespace {

Shape checked_shape(const IntList& shape, const char* fn, Where where) {
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      throw_invalid_argument(where, "{}(): size {} at dim {} of shape [{}] is negative", fn, shape[i], i,
                             fmt::join(shape, ", "));
  return Shape(shape);
}

Tensor filled(const IntList& shape, Scalar value, DType dtype, const char* fn, Where where) {
  Tensor t = Tensor::empty(checked_shape(shape, fn, where), dtype, where);
  const auto n = static_cast<std::size_t>(*t.shape().numel());
  visit_dtype(dtype, [&]<class T>() { std::fill_n(t.data_ptr<T>(), n, value.to<T>()); });
  return t;
}

template <class T, class Sample>
Tensor sampled(const IntList& shape, const char* fn, Where where, Sample sample) {
  Tensor t = Tensor::empty(checked_shape(shape, fn, where), dtype_of<T>(), where);
  T* data = t.data_ptr<T>();
  const auto n = *t.shape().numel();
  for (std::int64_t i = 0; i < n; ++i) data[i] = sample();
  return t;
}

Shape data_shape(std::size_t count, const IntList& shape, Where where) {
  if (shape.empty()) return Shape{static_cast<std::int64_t>(count)};
  Shape s = checked_shape(shape, "tensor", where);
  if (static_cast<std::size_t>(*s.numel()) != count)
    throw_invalid_argument(where, "tensor(): {} values do not fill shape {} ({} elements)", count, s, *s.numel());
  return s;
}

template <class T>
Tensor from_data(std::span<const T> data, const IntList& shape, Where where) {
  Tensor t = Tensor::empty(data_shape(data.size(), shape, where), dtype_of<T>(), where);
  if (!data.empty()) std::memcpy(t.data_ptr<T>(), data.data(), data.size() * sizeof(T));
  return t;
}

}  // namespace

namespace detail {
Tensor from_floats(std::span<const float> data, const IntList& shape, Where where) {
  return from_data(data, shape, where);
}
Tensor from_ints(std::span<const std::int64_t> data, const IntList& shape, Where where) {
  return from_data(data, shape, where);
}
Tensor from_bools(std::span<const bool> data, const IntList& shape, Where where) {
  return from_data(data, shape, where);
}
}  // namespace detail

Tensor zeros(const SymIntList& shape, DType dtype, Where where) {
  if (!shape.is_known()) [[unlikely]]
    return detail::symbolic_full("zeros", shape, 0, dtype, where);
  return filled(shape.to_int_list(), 0, dtype, "zeros", where);
}
Tensor ones(const SymIntList& shape, DType dtype, Where where) {
  if (!shape.is_known()) [[unlikely]]
    return detail::symbolic_full("ones", shape, 1, dtype, where);
  return filled(shape.to_int_list(), 1, dtype, "ones", where);
}
Tensor full(const SymIntList& shape, Scalar value, std::optional<DType> dtype, Where where) {
  if (!shape.is_known()) [[unlikely]]
    return detail::symbolic_full("full", shape, value, dtype.value_or(value.dtype()), where);
  return filled(shape.to_int_list(), value, dtype.value_or(value.dtype()), "full", where);
}

Tensor scalar_tensor(Scalar value, std::optional<DType> dtype, Where where) {
  return filled({}, value, dtype.value_or(value.dtype()), "scalar_tensor", where);
}

Tensor arange(Scalar end, std::optional<DType> dtype, Where where) {
  return arange(Scalar(std::int64_t{0}), end, Scalar(std::int64_t{1}), dtype, where);
}

Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype, Where where) {
  const bool integral = !start.is_floating() && !end.is_floating() && !step.is_floating();
  const DType out = dtype.value_or(integral ? DType::int64 : DType::float32);
  const double s = step.to_double();
  if (s == 0 || !std::isfinite(s) || !std::isfinite(start.to_double()) || !std::isfinite(end.to_double()))
    throw_invalid_argument(where, "arange(): step must be finite and nonzero and the bounds finite, got start={} end={} step={}",
                           start, end, step);
  const double span = (end.to_double() - start.to_double()) / s;
  if (span > 1e15)
    throw_invalid_argument(where, "arange(): start={} end={} step={} would make {:g} elements, too many to allocate",
                           start, end, step, std::ceil(span));
  const auto n = static_cast<std::int64_t>(std::max(0.0, std::ceil(span)));
  Tensor t = Tensor::empty(Shape{n}, out, where);
  visit_dtype(out, [&]<class T>() {
    T* data = t.data_ptr<T>();
    for (std::int64_t i = 0; i < n; ++i) {
      if (integral) data[i] = static_cast<T>(start.to_int() + i * step.to_int());
      else data[i] = static_cast<T>(start.to_double() + static_cast<double>(i) * s);
    }
  });
  return t;
}

Tensor randn(const IntList& shape, Where where) { return randn(shape, default_generator(), where); }
Tensor randn(const IntList& shape, Generator& gen, Where where) {
  return sampled<float>(shape, "randn", where, [&] { return gen.normal(); });
}
Tensor rand(const IntList& shape, Where where) { return rand(shape, default_generator(), where); }
Tensor rand(const IntList& shape, Generator& gen, Where where) {
  return sampled<float>(shape, "rand", where, [&] { return gen.uniform(); });
}

}  // namespace symtrace
