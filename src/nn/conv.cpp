#include "symtrace/nn/conv.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/init.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "nn/repr.hpp"

#include <fmt/format.h>

namespace symtrace::nn {

Conv2dImpl::Conv2dImpl(std::int64_t in, std::int64_t out, Size2 kernel, Conv2dOptions opts,
                       std::source_location where)
    : in_channels(in), out_channels(out), kernel_size(kernel), options(opts) {
  const auto bad = [&](const char* why) {
    throw_invalid_argument(where, "Conv2d({}, {}, kernel_size={}): {}", in, out, detail::pair_repr(kernel), why);
  };
  if (in <= 0 || out <= 0) bad("channel counts must be positive");
  if (kernel.h <= 0 || kernel.w <= 0) bad("the kernel size must be positive");
  if (opts.stride.h <= 0 || opts.stride.w <= 0) bad("the stride must be positive");
  if (opts.padding.h < 0 || opts.padding.w < 0) bad("the padding must be >= 0");
  if (opts.dilation.h <= 0 || opts.dilation.w <= 0) bad("the dilation must be positive");
  if (opts.groups <= 0) bad("groups must be positive");
  if (in % opts.groups != 0 || out % opts.groups != 0)
    throw_invalid_argument(where,
                           "Conv2d({}, {}, kernel_size={}): in_channels and out_channels must be "
                           "divisible by groups ({})",
                           in, out, detail::pair_repr(kernel), opts.groups);
  const std::int64_t fan_in = in / opts.groups * kernel.h * kernel.w;
  weight = register_parameter(
      "weight", init::fan_in_uniform_(Tensor::empty(Shape{out, in / opts.groups, kernel.h, kernel.w}), fan_in),
      where);
  if (opts.bias) bias = register_parameter("bias", init::fan_in_uniform_(Tensor::empty(Shape{out}), fan_in), where);
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  return conv2d(input, weight, bias, options.stride.list(), options.padding.list(), options.dilation.list(),
                options.groups);
}

std::string Conv2dImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels, out_channels,
                              detail::pair_repr(kernel_size), detail::pair_repr(options.stride));
  if (options.padding != Size2(0)) s += fmt::format(", padding={}", detail::pair_repr(options.padding));
  if (options.dilation != Size2(1)) s += fmt::format(", dilation={}", detail::pair_repr(options.dilation));
  if (options.groups != 1) s += fmt::format(", groups={}", options.groups);
  if (!bias.defined()) s += ", bias=False";
  return s;
}

namespace detail {
std::string pair_repr(const Size2& s) { return fmt::format("({}, {})", s.h, s.w); }
std::string int_or_pair_repr(const Size2& s) {
  return s.written_as_pair || s.h != s.w ? pair_repr(s) : fmt::format("{}", s.h);
}
}  // namespace detail

}  // namespace symtrace::nn
