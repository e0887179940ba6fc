// The small U-Net of unet.hpp. Each piece is its own module class so a trace (and a robust
// trace's failure report) names DoubleConv, Down and Up as torch.fx would for
// milesial/Pytorch-UNet.

#include "symtrace/zoo/unet.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/batch_norm.hpp"
#include "symtrace/nn/pooling.hpp"
#include "symtrace/ops/shape_ops.hpp"

#include <optional>
#include <vector>

namespace symtrace::zoo {

DoubleConvImpl::DoubleConvImpl(std::int64_t in_channels, std::int64_t out_channels) {
  double_conv = register_module(
      "double_conv",
      nn::Sequential(nn::Conv2d(in_channels, out_channels, 3, {.padding = 1, .bias = false}),
                     nn::BatchNorm2d(out_channels), nn::ReLU({.inplace = true}),
                     nn::Conv2d(out_channels, out_channels, 3, {.padding = 1, .bias = false}),
                     nn::BatchNorm2d(out_channels), nn::ReLU({.inplace = true})));
}

Tensor DoubleConvImpl::forward(const Tensor& x) { return double_conv(x); }

DownImpl::DownImpl(std::int64_t in_channels, std::int64_t out_channels) {
  maxpool_conv = register_module("maxpool_conv",
                                 nn::Sequential(nn::MaxPool2d(2), DoubleConv(in_channels, out_channels)));
}

Tensor DownImpl::forward(const Tensor& x) { return maxpool_conv(x); }

UpImpl::UpImpl(std::int64_t in_channels, std::int64_t out_channels, std::source_location where)
    : TypedModule({"x", "skip"}, where) {
  if (in_channels <= 0 || in_channels % 2 != 0)
    throw_invalid_argument(where, "Up: in_channels is {}; it must be positive and even (the 1x1 convolution halves it "
                                  "to match the skip connection)",
                           in_channels);
  up = register_module("up", nn::Upsample({.size = std::nullopt, .scale_factor = std::vector{2.0}, .mode = "nearest"}));
  reduce = register_module("reduce", nn::Conv2d(in_channels, in_channels / 2, 1));
  conv = register_module("conv", DoubleConv(in_channels, out_channels));
}

Tensor UpImpl::forward(const Tensor& x, const Tensor& skip) {
  Tensor y = reduce(up(x));
  y = cat({skip, y}, 1);
  return conv(y);
}

UNetImpl::UNetImpl(UNetConfig config, std::source_location where) : config(config) {
  if (config.in_channels <= 0 || config.num_classes <= 0 || config.base_width <= 0)
    throw_invalid_argument(where,
                           "UNet: in_channels {}, num_classes {} and base_width {} must all be positive",
                           config.in_channels, config.num_classes, config.base_width);
  const std::int64_t w = config.base_width;
  inc = register_module("inc", DoubleConv(config.in_channels, w));
  down1 = register_module("down1", Down(w, 2 * w));
  down2 = register_module("down2", Down(2 * w, 4 * w));
  down3 = register_module("down3", Down(4 * w, 8 * w));
  up1 = register_module("up1", Up(8 * w, 4 * w));
  up2 = register_module("up2", Up(4 * w, 2 * w));
  up3 = register_module("up3", Up(2 * w, w));
  outc = register_module("outc", nn::Conv2d(w, config.num_classes, 1));
}

Tensor UNetImpl::forward(const Tensor& x) {
  Tensor x1 = inc(x);
  Tensor x2 = down1(x1);
  Tensor x3 = down2(x2);
  Tensor y = down3(x3);
  y = up1(y, x3);
  y = up2(y, x2);
  y = up3(y, x1);
  return outc(y);
}

std::shared_ptr<Module> unet_small() { return std::make_shared<UNetImpl>(); }

}  // namespace symtrace::zoo
