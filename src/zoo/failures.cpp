// MixedFailures: one child per untraceable pattern. Each child's forward is written the way a
// user would write it, so the failure happens where it would in user code: at `to_bool()`,
// `item()` or `to_vector()` on a tensor a tracer holds symbolically.
#include "symtrace/zoo/failures.hpp"

#include "symtrace/core/factories.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "symtrace/ops/pointwise.hpp"
#include "symtrace/ops/shape_ops.hpp"

#include <algorithm>
#include <vector>

namespace symtrace::zoo {

Tensor subtract_median(const Tensor& x) {
  std::vector<float> values = x.to_vector<float>();
  if (values.empty()) return x;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return x - static_cast<double>(*middle);
}

GatedConvImpl::GatedConvImpl(std::int64_t channels) {
  conv_a = register_module("conv_a", nn::Conv2d(channels, channels, 3, {.padding = 1}));
  conv_b = register_module("conv_b", nn::Conv2d(channels, channels, 3, {.padding = 1}));
}

const int GatedConvImpl::data_branch_line = __LINE__ + 3;  // the `if` below

Tensor GatedConvImpl::forward(const Tensor& x) {
  if ((x.mean() > 0).to_bool())  // data-dependent if
    return conv_a(x);
  return conv_b(x);
}

RepeatedConvImpl::RepeatedConvImpl(std::int64_t channels) {
  conv = register_module("conv", nn::Conv2d(channels, channels, 3, {.padding = 1}));
}

Tensor RepeatedConvImpl::forward(const Tensor& x) {
  const int n = 1 + (x.abs().amax().item<double>() > 1.0);  // loop bound read from data
  Tensor out = x;
  for (int i = 0; i < n; ++i) out = relu(conv(out));
  return out;
}

Tensor OpaqueMedianCenterImpl::forward(const Tensor& x) { return subtract_median(x); }

Tensor PositiveChannelMaskImpl::forward(const Tensor& x) {
  const SymInt channels = x.size(1);
  const std::int64_t k = (x.mean({0, 2, 3}) > 0).sum().item<std::int64_t>();  // a size read from data
  const Tensor mask = cat({ones({k}), zeros({channels - k})}).reshape({1, channels, 1, 1});
  return x * mask;
}

MixedFailuresImpl::MixedFailuresImpl(std::int64_t num_classes) {
  stem = register_module("stem", nn::Sequential(nn::Conv2d(3, width, 3, {.padding = 1}), nn::ReLU()));
  gate = register_module("gate", GatedConv(width));
  repeat = register_module("repeat", RepeatedConv(width));
  opaque = register_module("opaque", OpaqueMedianCenter());
  topk = register_module("topk", PositiveChannelMask());
  heads = register_module("heads", nn::ModuleList(nn::Linear(width, num_classes), nn::Linear(width, num_classes)));
  unused = register_module("unused", nn::Linear(width, num_classes));
}

Tensor MixedFailuresImpl::forward(const Tensor& x) {
  Tensor out = stem(x);
  out = gate(out);
  out = repeat(out);
  out = opaque(out);
  out = topk(out);
  out = adaptive_avg_pool2d(out, {1, 1}).flatten(1);
  // The parent indexes the ModuleList and calls its elements; the list itself is never called.
  const nn::Linear first(heads->ptr<nn::LinearImpl>(0));
  const nn::Linear second(heads->ptr<nn::LinearImpl>(1));
  return (first(out) + second(out)) * 0.5;
}

std::shared_ptr<Module> mixed_failures() { return std::make_shared<MixedFailuresImpl>(); }

}  // namespace symtrace::zoo
