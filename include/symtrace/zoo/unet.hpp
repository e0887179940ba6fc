#pragma once
/// \file
/// A small U-Net (Ronneberger et al., 2015) for the zoo, defined here (it has no anchor): the
/// module layout follows the widely used PyTorch implementation milesial/Pytorch-UNet (inc,
/// down1.., up1.., outc; DoubleConv.double_conv, Down.maxpool_conv), with a nearest-neighbour
/// upsampling path and no padding logic.
///
/// unet_small (UNetConfig defaults): in_channels 3, 2 classes, base width 16.
/// ```
/// inc    DoubleConv(3, 16)                              64x64   -> skip x1
/// down1  MaxPool2d(2) -> DoubleConv(16, 32)             32x32   -> skip x2
/// down2  MaxPool2d(2) -> DoubleConv(32, 64)             16x16   -> skip x3
/// down3  MaxPool2d(2) -> DoubleConv(64, 128)            8x8        (bottleneck)
/// up1    Upsample(x2, nearest) -> Conv1x1(128, 64) -> cat([x3, .], dim 1) -> DoubleConv(128, 64)
/// up2    Upsample(x2, nearest) -> Conv1x1(64, 32)  -> cat([x2, .], dim 1) -> DoubleConv(64, 32)
/// up3    Upsample(x2, nearest) -> Conv1x1(32, 16)  -> cat([x1, .], dim 1) -> DoubleConv(32, 16)
/// outc   Conv1x1(16, 2)                                 64x64
/// ```
/// DoubleConv(in, out) is Conv3x3(in, out, no bias) -> BatchNorm2d -> ReLU(inplace), twice;
/// the 1x1 convolutions have biases. 450,498 parameters. The input's height and width must be
/// divisible by 8 (three halvings and three doublings must meet the skips).
///
/// ```
/// auto model = symtrace::zoo::unet_small();
/// Tensor y = model->call({randn({1, 3, 64, 64})}).to_tensor();  // [1, 2, 64, 64]
/// ```

#include "symtrace/core/tensor.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/sequential.hpp"
#include "symtrace/nn/shape_layers.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <memory>
#include <source_location>

namespace symtrace::zoo {

/// (Conv3x3 without bias -> BatchNorm2d -> ReLU) twice, in the Sequential `double_conv`;
/// keeps the spatial size.
class DoubleConvImpl : public TypedModule<DoubleConvImpl> {
 public:
  DoubleConvImpl(std::int64_t in_channels, std::int64_t out_channels);
  Tensor forward(const Tensor& x);
  nn::Sequential double_conv{nullptr};
};
SYMTRACE_MODULE(DoubleConv);

/// MaxPool2d(2) -> DoubleConv, in the Sequential `maxpool_conv`: halves the spatial size.
class DownImpl : public TypedModule<DownImpl> {
 public:
  DownImpl(std::int64_t in_channels, std::int64_t out_channels);
  Tensor forward(const Tensor& x);
  nn::Sequential maxpool_conv{nullptr};
};
SYMTRACE_MODULE(Down);

/// The decoder step: `up` (nearest x2) -> `reduce` (Conv1x1 to in_channels / 2) -> cat with
/// the encoder's `skip` (skip first, dim 1) -> `conv` (DoubleConv(in_channels, out_channels)).
/// `skip` must have in_channels / 2 channels and twice x's height and width.
class UpImpl : public TypedModule<UpImpl> {
 public:
  /// Throws std::invalid_argument when in_channels is odd.
  UpImpl(std::int64_t in_channels, std::int64_t out_channels,
         std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& x, const Tensor& skip);
  nn::Upsample up{nullptr};
  nn::Conv2d reduce{nullptr};
  DoubleConv conv{nullptr};
};
SYMTRACE_MODULE(Up);

/// A U-Net's shape; the defaults are unet_small.
struct UNetConfig {
  std::int64_t in_channels = 3;
  std::int64_t num_classes = 2;
  std::int64_t base_width = 16;  ///< channels of the first stage; each stage down doubles it
};

/// The three-stage U-Net drawn in the file comment. Takes [N, in_channels, H, W] (H and W
/// divisible by 8) and returns per-pixel class scores [N, num_classes, H, W].
class UNetImpl : public TypedModule<UNetImpl> {
 public:
  /// Throws std::invalid_argument for a non-positive channel or class count.
  explicit UNetImpl(UNetConfig config = {}, std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& x);

  DoubleConv inc{nullptr};
  Down down1{nullptr}, down2{nullptr}, down3{nullptr};
  Up up1{nullptr}, up2{nullptr}, up3{nullptr};
  nn::Conv2d outc{nullptr};
  UNetConfig config;
};
SYMTRACE_MODULE(UNet);

/// unet_small: UNetConfig{} (3 input channels, 2 classes, base width 16), 450,498 parameters.
[[nodiscard]] std::shared_ptr<Module> unet_small();

}  // namespace symtrace::zoo
