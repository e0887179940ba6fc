#include "symtrace/nn/pooling.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "nn/repr.hpp"

#include <fmt/format.h>

namespace symtrace::nn {

namespace {
void check_window(const char* layer, const Size2& kernel, const Size2& stride, const Size2& padding,
                  std::source_location where) {
  if (kernel.h <= 0 || kernel.w <= 0 || stride.h <= 0 || stride.w <= 0)
    throw_invalid_argument(where, "{}(kernel_size={}, stride={}): sizes must be positive", layer,
                           detail::int_or_pair_repr(kernel), detail::int_or_pair_repr(stride));
  if (padding.h < 0 || padding.w < 0 || 2 * padding.h > kernel.h || 2 * padding.w > kernel.w)
    throw_invalid_argument(where, "{}(kernel_size={}): padding {} must be >= 0 and at most half the kernel size",
                           layer, detail::int_or_pair_repr(kernel), detail::int_or_pair_repr(padding));
}
}  // namespace

MaxPool2dImpl::MaxPool2dImpl(Size2 kernel, MaxPool2dOptions opts, std::source_location where)
    : kernel_size(kernel), stride(opts.stride.value_or(kernel)), options(opts) {
  check_window("MaxPool2d", kernel_size, stride, options.padding, where);
  if (options.dilation.h <= 0 || options.dilation.w <= 0)
    throw_invalid_argument(where, "MaxPool2d(kernel_size={}): dilation {} must be positive",
                           detail::int_or_pair_repr(kernel_size), detail::int_or_pair_repr(options.dilation));
}

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return max_pool2d(input, kernel_size.list(), stride.list(), options.padding.list(), options.dilation.list(),
                    options.ceil_mode);
}

std::string MaxPool2dImpl::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}",
                     detail::int_or_pair_repr(kernel_size), detail::int_or_pair_repr(stride),
                     detail::int_or_pair_repr(options.padding), detail::int_or_pair_repr(options.dilation),
                     detail::py_bool(options.ceil_mode));
}

AvgPool2dImpl::AvgPool2dImpl(Size2 kernel, AvgPool2dOptions opts, std::source_location where)
    : kernel_size(kernel), stride(opts.stride.value_or(kernel)), options(opts) {
  check_window("AvgPool2d", kernel_size, stride, options.padding, where);
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return avg_pool2d(input, kernel_size.list(), stride.list(), options.padding.list(), options.ceil_mode,
                    options.count_include_pad);
}

std::string AvgPool2dImpl::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", detail::int_or_pair_repr(kernel_size),
                     detail::int_or_pair_repr(stride), detail::int_or_pair_repr(options.padding));
}

AdaptiveAvgPool2dImpl::AdaptiveAvgPool2dImpl(Size2 size, std::source_location where) : output_size(size) {
  if (size.h <= 0 || size.w <= 0)
    throw_invalid_argument(where, "AdaptiveAvgPool2d: output_size {} must be positive", detail::pair_repr(size));
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) { return adaptive_avg_pool2d(input, output_size.list()); }

std::string AdaptiveAvgPool2dImpl::extra_repr() const {
  return fmt::format("output_size={}", detail::int_or_pair_repr(output_size));
}

}  // namespace symtrace::nn
