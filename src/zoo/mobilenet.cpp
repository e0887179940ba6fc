// MobileNetV2, written as the Python in bench/fx/models.py: same attribute names,
// same registration order, same forward (functional pooling and flatten between the two
// Sequentials, as the Python forward does, so a trace records them as call_function).

#include "symtrace/zoo/mobilenet.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/batch_norm.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/dropout.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "symtrace/ops/shape_ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace symtrace::zoo {

std::int64_t make_divisible(double value, std::int64_t divisor, std::optional<std::int64_t> min_value) {
  const std::int64_t floor_value = min_value.value_or(divisor);
  // Python: int(v + divisor / 2) // divisor * divisor (int() truncates; v is positive).
  const auto rounded = static_cast<std::int64_t>(value + static_cast<double>(divisor) / 2.0) / divisor * divisor;
  std::int64_t out = std::max(floor_value, rounded);
  if (static_cast<double>(out) < 0.9 * value) out += divisor;  // do not round down by more than 10%
  return out;
}

ConvBNReLUImpl::ConvBNReLUImpl(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel_size,
                               std::int64_t stride, std::int64_t groups) {
  push_back(nn::Conv2d(in_channels, out_channels, kernel_size,
                       {.stride = stride, .padding = (kernel_size - 1) / 2, .groups = groups, .bias = false}));
  push_back(nn::BatchNorm2d(out_channels));
  push_back(nn::ReLU6({.inplace = true}));
}

InvertedResidualImpl::InvertedResidualImpl(std::int64_t in_channels, std::int64_t out_channels, std::int64_t stride,
                                           std::int64_t expand_ratio)
    : use_res_connect(stride == 1 && in_channels == out_channels) {
  // Python's int(round(inp * expand_ratio)) on integers is the product.
  const std::int64_t hidden = in_channels * expand_ratio;
  nn::Sequential layers;
  if (expand_ratio != 1) layers->push_back(ConvBNReLU(in_channels, hidden, 1));
  layers->push_back(ConvBNReLU(hidden, hidden, 3, stride, hidden));
  layers->push_back(nn::Conv2d(hidden, out_channels, 1, {.stride = 1, .padding = 0, .bias = false}));
  layers->push_back(nn::BatchNorm2d(out_channels));
  conv = register_module("conv", layers);
}

Tensor InvertedResidualImpl::forward(const Tensor& x) {
  if (use_res_connect) return x + conv(x);  // fixed at construction: traceable
  return conv(x);
}

namespace {
struct StageSetting {
  std::int64_t t, c, n, s;  // expansion, output channels, repeats, first stride
};
constexpr std::array<StageSetting, 7> inverted_residual_setting = {{
    {1, 16, 1, 1},
    {6, 24, 2, 2},
    {6, 32, 3, 2},
    {6, 64, 4, 2},
    {6, 96, 3, 1},
    {6, 160, 3, 2},
    {6, 320, 1, 1},
}};
}  // namespace

MobileNetV2Impl::MobileNetV2Impl(MobileNetV2Config config, std::source_location where) {
  if (config.num_classes <= 0)
    throw_invalid_argument(where, "MobileNetV2: num_classes is {}; it must be positive", config.num_classes);
  if (!(config.width_mult > 0))
    throw_invalid_argument(where, "MobileNetV2: width_mult is {}; it must be positive", config.width_mult);
  std::int64_t input_channel = make_divisible(32 * config.width_mult);
  last_channel = make_divisible(1280 * std::max(1.0, config.width_mult));
  nn::Sequential stack;
  stack->push_back(ConvBNReLU(3, input_channel, 3, 2));
  for (const StageSetting& stage : inverted_residual_setting) {
    const std::int64_t output_channel = make_divisible(static_cast<double>(stage.c) * config.width_mult);
    for (std::int64_t i = 0; i < stage.n; ++i) {
      stack->push_back(InvertedResidual(input_channel, output_channel, i == 0 ? stage.s : 1, stage.t));
      input_channel = output_channel;
    }
  }
  stack->push_back(ConvBNReLU(input_channel, last_channel, 1));
  features = register_module("features", stack);
  classifier = register_module("classifier",
                               nn::Sequential(nn::Dropout(0.2), nn::Linear(last_channel, config.num_classes)));
}

Tensor MobileNetV2Impl::forward(const Tensor& input) {
  Tensor x = features(input);
  x = adaptive_avg_pool2d(x, {1, 1});
  x = flatten(x, 1);
  return classifier(x);
}

std::shared_ptr<Module> mobilenet_v2(MobileNetV2Config config) {
  return std::make_shared<MobileNetV2Impl>(config);
}

}  // namespace symtrace::zoo
